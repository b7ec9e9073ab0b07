"""Admin login throttling and failed-login logging (issue 18, item 1), through the test client.

Runs on the default cache of the test settings and on the Redis cache that production uses
(the session's Redis: CI's REDIS_URL, else an embedded server the tests start)."""

import io
import logging

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from operations.login_throttle import failures_clear

pytestmark = pytest.mark.django_db
PASSWORD = "right-password-1"


ADDRESSES = ("127.0.0.1", "10.0.0.9", "10.0.0.66")
USERNAMES = ("admin", "other", *(f"guess{i}" for i in range(8)))


def _clear_all() -> None:
    for address in ADDRESSES:
        failures_clear(address)
        for name in USERNAMES:
            failures_clear(address, name)


@pytest.fixture(params=["default", "redis"])
def cache_backend(request, settings):
    if request.param == "redis":
        settings.CACHES = {"default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": request.getfixturevalue("redis_url"), "KEY_PREFIX": "yioopy-test-throttle"}}
    settings.LOGIN_THROTTLE_FAILURES = 5
    settings.LOGIN_THROTTLE_ADDRESS_FAILURES = 8
    settings.LOGIN_THROTTLE_WINDOW = 900
    _clear_all()
    yield request.param
    _clear_all()


@pytest.fixture
def admin_user(django_user_model):
    return django_user_model.objects.create_superuser("admin", "a@example.com", PASSWORD)


def login(client, username, password, address="127.0.0.1"):
    return client.post(reverse("admin:login"), {"username": username, "password": password,
                                                "next": "/admin/"}, REMOTE_ADDR=address)


def test_sixth_attempt_with_the_right_password_is_refused(client, admin_user, cache_backend,
                                                          caplog):
    with caplog.at_level(logging.WARNING, logger="crawler.login"):
        for _ in range(5):
            response = login(client, "admin", "wrong")
            assert response.status_code == 200 and "_auth_user_id" not in client.session
    failed = [r for r in caplog.records if r.name == "crawler.login" and "failed" in r.message]
    assert len(failed) == 5
    assert all(r.levelno == logging.WARNING for r in failed)
    assert "'admin'" in failed[0].getMessage() and "127.0.0.1" in failed[0].getMessage()

    response = login(client, "admin", PASSWORD)
    assert response.status_code == 200
    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_one_address_is_throttled_across_usernames(client, admin_user, cache_backend):
    for i in range(8):  # LOGIN_THROTTLE_ADDRESS_FAILURES, each username below its own limit
        login(client, f"guess{i}", "wrong")
    assert "Too many failed" in login(client, "admin", PASSWORD).content.decode()
    # Another address may still log in as admin (its pair and address have no failures).
    response = login(client, "admin", PASSWORD, address="10.0.0.9")
    assert response.status_code == 302 and response["Location"] == "/admin/"


def test_failures_from_one_address_never_lock_the_account_out_from_another(
        client, admin_user, cache_backend):
    for _ in range(10):  # twice the limit, from the attacker's address
        login(client, "admin", "wrong", address="10.0.0.66")
    assert "Too many failed" in login(client, "admin", PASSWORD,
                                      address="10.0.0.66").content.decode()
    response = login(client, "admin", PASSWORD, address="127.0.0.1")
    assert response.status_code == 302 and "_auth_user_id" in client.session


def test_usernames_are_counted_case_folded_and_stripped(client, admin_user, django_user_model,
                                                         cache_backend):
    django_user_model.objects.create_user("other", "o@example.com", PASSWORD, is_staff=True)
    # one username five ways (the last in full-width letters, NFKC-equal to ADMIN)
    for variant in ("Admin", " admin", "ADMIN", "admin ", "\uff21\uff24\uff2d\uff29\uff2e"):
        login(client, variant, "wrong")
    assert "Too many failed" in login(client, "admin", PASSWORD).content.decode()
    # five failures are far from the address's own limit: another account still gets in
    response = login(client, "other", PASSWORD)
    assert response.status_code == 302 and "_auth_user_id" in client.session


def test_unlock_login_clears_a_username_from_an_address(client, admin_user, settings,
                                                        redis_url):
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": redis_url, "KEY_PREFIX": "yioopy-test-unlock"}}
    settings.LOGIN_THROTTLE_FAILURES = 5
    settings.LOGIN_THROTTLE_ADDRESS_FAILURES = 8
    for _ in range(5):
        login(client, "admin", "wrong")
    assert "Too many failed" in login(client, "admin", PASSWORD).content.decode()
    out = io.StringIO()
    call_command("unlock_login", "--address", "127.0.0.1", "--username", "ADMIN", stdout=out)
    assert "Unlocked the admin login for username 'ADMIN' from 127.0.0.1" in out.getvalue()
    assert login(client, "admin", PASSWORD).status_code == 302


def test_unlock_login_says_a_memory_cache_is_out_of_its_reach(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": "unlock-test"}}
    with pytest.raises(CommandError, match="restart the web server"):
        call_command("unlock_login", "--address", "127.0.0.1")


def test_fewer_failures_let_the_right_password_in_and_clear_the_count(client, admin_user,
                                                                     cache_backend, settings):
    settings.LOGIN_THROTTLE_ADDRESS_FAILURES = 20  # the success clears the pair's count only
    for _ in range(4):
        login(client, "admin", "wrong")
    assert login(client, "admin", PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):  # the success cleared the count: four more are allowed
        login(client, "admin", "wrong")
    assert login(client, "admin", PASSWORD).status_code == 302


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_with_the_cache_down_logins_skip_the_throttle_and_say_so(client, admin_user, settings,
                                                                 caplog):
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
        "OPTIONS": {"socket_connect_timeout": 0.5}}}
    with caplog.at_level(logging.WARNING, logger="crawler.login"):
        wrong = login(client, "admin", "wrong")
        assert wrong.status_code == 200 and "_auth_user_id" not in client.session
        assert "Please enter the correct username and password" in wrong.content.decode()
        right = login(client, "admin", PASSWORD)
    assert right.status_code == 302 and "_auth_user_id" in client.session
    skipped = [r for r in caplog.records if r.levelno == logging.ERROR
               and "login throttle skipped" in r.getMessage()]
    assert skipped and "could not be reached" in skipped[0].getMessage()
    assert any("failed login for username 'admin'" in r.getMessage() for r in caplog.records)
