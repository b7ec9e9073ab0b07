"""Who may call the agent API (ranking.agent.access, issue 38): loopback, or the token; never
another web origin."""

from __future__ import annotations

from ranking.agent.access import Refusal, bearer, is_loopback, refusal

OWN = "http://127.0.0.1:8765"


def test_loopback_clients_need_no_token():
    assert refusal("127.0.0.1", None, None, OWN, "", ()) is None
    assert refusal("::1", None, None, OWN, "secret", ()) is None


def test_remote_clients_need_the_token_and_none_set_serves_none():
    assert refusal("192.0.2.7", None, None, OWN, "", ()).status == 403
    assert refusal("192.0.2.7", "Bearer secret", None, OWN, "", ()).status == 403
    assert refusal("192.0.2.7", None, None, OWN, "secret", ()) == Refusal(
        401, "remote use of the agent API needs Authorization: Bearer <token>")
    assert refusal("192.0.2.7", "Bearer wrong", None, OWN, "secret", ()).status == 401
    assert refusal("192.0.2.7", "Bearer secret", None, OWN, "secret", ()) is None
    assert refusal("unknown", "bearer  secret ", None, OWN, "secret", ()) is None


def test_a_wrong_token_is_refused_even_from_loopback():
    assert refusal("127.0.0.1", "Bearer wrong", None, OWN, "secret", ()).status == 401


def test_other_origins_are_refused_whoever_asks():
    evil = "https://evil.example"
    assert refusal("127.0.0.1", None, evil, OWN, "", ()).status == 403
    assert refusal("192.0.2.7", "Bearer secret", evil, OWN, "secret", ()).status == 403
    assert refusal("127.0.0.1", None, OWN + "/", OWN, "", ()) is None  # its own page
    assert refusal("127.0.0.1", None, evil, OWN, "", ("https://EVIL.example/",)) is None
    assert refusal("127.0.0.1", None, "null", OWN, "", ()).status == 403


def test_helpers():
    assert bearer("Bearer abc") == "abc" and bearer("Basic abc") is None and bearer(None) is None
    assert bearer("Bearer ") is None
    assert is_loopback("127.8.0.1") and is_loopback("[::1]") and not is_loopback("10.0.0.1")
    assert not is_loopback("") and not is_loopback(None) and not is_loopback("localhost")
