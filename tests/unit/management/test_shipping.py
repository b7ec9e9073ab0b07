import base64
import zlib
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.core.shipping import EnvelopeError, open_envelope, seal, shard_of_host


def test_round_trip_and_kind_check():
    payload = {"urls": ["https://a.com/"], "n": 3, "text": "héllo"}
    message = seal("batch", payload, "secret")
    assert open_envelope(message, "secret", "batch") == payload
    with pytest.raises(EnvelopeError, match="expected a 'schedule' message"):
        open_envelope(message, "secret", "schedule")


def test_wrong_token_and_tampering_are_refused():
    message = seal("batch", {"a": 1}, "secret")
    with pytest.raises(EnvelopeError, match="shared token"):
        open_envelope(message, "other", "batch")
    forged = dict(message, body=base64.b64encode(zlib.compress(b'{"a":2}')).decode())
    with pytest.raises(EnvelopeError, match="bad signature"):
        open_envelope(forged, "secret", "batch")
    relabelled = dict(message, kind="schedule")
    with pytest.raises(EnvelopeError):
        open_envelope(relabelled, "secret", "schedule")
    for junk in (None, [], {"v": 9}, dict(message, body="***")):
        with pytest.raises(EnvelopeError):
            open_envelope(junk, "secret", "batch")
    with pytest.raises(EnvelopeError, match="no shared token"):
        seal("batch", {}, "")


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids),
                    max_leaves=20))
def test_any_json_round_trips(payload):
    assert open_envelope(seal("x", payload, "t"), "t", "x") == payload


def test_sharding_is_stable_and_spreads_hosts():
    assert shard_of_host("Example.COM", 4) == shard_of_host("example.com", 4)
    assert all(shard_of_host(f"h{i}.com", 1) == 0 for i in range(50))
    counts = Counter(shard_of_host(f"host{i}.example", 3) for i in range(3000))
    assert set(counts) == {0, 1, 2} and min(counts.values()) > 800
    with pytest.raises(ValueError):
        shard_of_host("a.com", 0)


def test_sealed_long_lists_are_the_same_json_text() -> None:
    """Long lists are turned into JSON and compressed a slice at a time; the text the queue
    server gets is exactly the whole payload's compact JSON."""
    import json

    from crawler.core.shipping import SEAL_SLICE, open_envelope_raw, seal

    payload = {"crawl": 1, "docs": [{"s": "é" * (i % 7), "x": i} for i in range(3 * SEAL_SLICE + 5)],
               "discovered": [["https://a.example/", i, 0.5, None, True] for i in range(SEAL_SLICE)],
               "robots": [], "done": False, "counters": {"pages": 3}}
    for sent in (payload, [1, 2], "text"):
        raw = open_envelope_raw(seal("batch", sent, "token"), "token", "batch")
        assert raw == json.dumps(sent, separators=(",", ":"), ensure_ascii=False).encode()
        assert json.loads(raw) == sent
