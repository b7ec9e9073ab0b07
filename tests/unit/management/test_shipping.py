"""Signed envelopes (crawler.core.transport.shipping): what the signature covers (body, kind, route,
id,
issue time), and the replay guard's window and once-only rule over a store of handled ids."""

import base64
import json
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.core.transport.shipping import (
    CLOCK_SLACK,
    EnvelopeError,
    ReplayGuard,
    open_envelope,
    seal,
)

ROUTE = {"server": 1, "crawl": 1700000000}


class MemorySeenIds:
    """The ``SeenIds`` contract in a dict: id -> expiry on the test's clock."""

    def __init__(self, clock):
        self.clock = clock
        self.expiry: dict[str, float] = {}

    def seen(self, envelope_id):
        return self.expiry.get(envelope_id, -1.0) > self.clock()

    def record(self, envelope_id, ttl):
        if self.seen(envelope_id):
            return False
        self.expiry[envelope_id] = self.clock() + ttl
        return True


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


def test_round_trip_and_kind_check():
    payload = {"urls": ["https://a.com/"], "n": 3, "text": "héllo"}
    message = seal("batch", payload, "secret", route=ROUTE, now=123.5)
    opened = open_envelope(message, "secret", "batch")
    assert opened.payload() == payload and opened.route == ROUTE and opened.issued == 123.5
    assert opened.route_int("server") == 1 and len(opened.id) == 32
    with pytest.raises(EnvelopeError, match="no integer 'queue'"):
        opened.route_int("queue")
    with pytest.raises(EnvelopeError, match="expected a 'schedule' message"):
        open_envelope(message, "secret", "schedule")
    # every envelope has its own id, even for the same payload at the same time
    assert len({seal("batch", payload, "t", now=1.0)["head"] for _ in range(50)}) == 50


def _head(message):
    return json.loads(message["head"])


def _with_head(message, **changes):
    return dict(message, head=json.dumps({**_head(message), **changes}))


def test_wrong_token_and_tampering_are_refused():
    message = seal("batch", {"a": 1}, "secret", route=ROUTE)
    with pytest.raises(EnvelopeError, match="shared token"):
        open_envelope(message, "other", "batch")
    forged = dict(message, body=base64.b64encode(zlib.compress(b'{"a":2}')).decode())
    with pytest.raises(EnvelopeError, match="bad signature"):
        open_envelope(forged, "secret", "batch")
    with pytest.raises(EnvelopeError, match="bad signature"):
        open_envelope(_with_head(message, kind="schedule"), "secret", "schedule")
    for junk in (None, [], {"v": 9}, {"v": 1, "kind": "batch", "body": "", "sig": ""},
                 dict(message, body="***"), dict(message, head=None)):
        with pytest.raises(EnvelopeError):
            open_envelope(junk, "secret", "batch")
    with pytest.raises(EnvelopeError, match="no shared token"):
        seal("batch", {}, "")


def test_the_route_id_and_issue_time_are_signed():
    """Sending a batch to another queue server or crawl, giving an old envelope a new date or
    a replay a new id all break the signature."""
    message = seal("batch", {"a": 1}, "secret", route=ROUTE, now=500.0)
    for changes in ({"route": {"server": 0, "crawl": ROUTE["crawl"]}},
                    {"route": {"server": 1, "crawl": 1}}, {"route": {}},
                    {"issued": 10_000.0}, {"id": "0" * 32}):
        with pytest.raises(EnvelopeError, match="bad signature"):
            open_envelope(_with_head(message, **changes), "secret", "batch")
    assert open_envelope(message, "secret", "batch").route == ROUTE


def test_an_envelope_older_than_the_window_is_refused():
    clock = Clock()
    guard = ReplayGuard(MemorySeenIds(clock), max_age=3600 * 24, clock=clock)
    for age, fresh in ((0, True), (86_400, True), (86_401, False), (-86_400, True),
                       (-86_401, False)):
        opened = open_envelope(seal("schedule", {}, "k", now=clock.now - age), "k", "schedule")
        if fresh:
            guard.admit(opened)
        else:
            with pytest.raises(EnvelopeError, match="sealed 86401 s ago|in the future"):
                guard.admit(opened)


def test_a_replay_is_refused_and_an_unfinished_message_is_admitted_again():
    clock = Clock()
    seen = MemorySeenIds(clock)
    guard = ReplayGuard(seen, max_age=7200, clock=clock)
    message = seal("batch", {"a": 1}, "k", route=ROUTE, now=clock.now)
    opened = open_envelope(message, "k", "batch")
    guard.admit(opened)
    # its worker died before it finished: nothing was recorded, the redelivery goes through
    guard.admit(open_envelope(message, "k", "batch"))
    assert guard.handled(opened) is True
    clock.now += 3600
    with pytest.raises(EnvelopeError, match="handled already: a replay"):
        guard.admit(open_envelope(message, "k", "batch"))
    assert guard.handled(opened) is False  # a second record says a copy was handled too
    # another envelope with the same payload is a new message
    guard.admit(open_envelope(seal("batch", {"a": 1}, "k", route=ROUTE, now=clock.now), "k",
                              "batch"))
    # the id is kept until the envelope is refused for its age anyway
    assert seen.expiry[opened.id] == message_issued(message) + 7200 + CLOCK_SLACK
    clock.now = message_issued(message) + 7201
    with pytest.raises(EnvelopeError, match="sealed 7201 s ago"):
        guard.admit(open_envelope(message, "k", "batch"))


def message_issued(message):
    return _head(message)["issued"]


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids),
                    max_leaves=20))
def test_any_json_round_trips(payload):
    assert open_envelope(seal("x", payload, "t"), "t", "x").payload() == payload


def test_sealed_long_lists_are_the_same_json_text() -> None:
    """Long lists are turned into JSON and compressed a slice at a time; the text the queue
    server gets is exactly the whole payload's compact JSON."""
    from crawler.core.transport.shipping import SEAL_SLICE

    payload = {"crawl": 1, "docs": [{"s": "é" * (i % 7), "x": i} for i in range(3 * SEAL_SLICE + 5)],
               "discovered": [["https://a.example/", i, 0.5, None, True] for i in range(SEAL_SLICE)],
               "robots": [], "done": False, "counters": {"pages": 3}}
    for sent in (payload, [1, 2], "text"):
        raw = open_envelope(seal("batch", sent, "token"), "token", "batch").raw
        assert raw == json.dumps(sent, separators=(",", ":"), ensure_ascii=False).encode()
        assert json.loads(raw) == sent
