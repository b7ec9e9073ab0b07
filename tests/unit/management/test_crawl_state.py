import pytest

from crawler.core.definition.crawl import (
    TRANSITIONS,
    CrawlStatus,
    InvalidTransition,
    allowed_actions,
    next_status,
)


@pytest.mark.parametrize(
    ("state", "action", "expected"),
    [
        ("new", "start", "running"),
        ("running", "stop", "stopping"),
        ("running", "finish", "stopped"),
        ("stopping", "saved", "resumable"),
        ("resumable", "resume", "running"),
        ("resumable", "close", "closed"),
        ("stopped", "close", "closed"),
    ],
)
def test_allowed_transitions(state, action, expected):
    assert next_status(state, action) == CrawlStatus(expected)


@pytest.mark.parametrize(
    ("state", "action"),
    [("running", "start"), ("new", "stop"), ("new", "resume"), ("stopped", "resume"),
     ("closed", "start"), ("closed", "resume"), ("stopping", "stop"), ("running", "close")],
)
def test_refused_transitions_name_the_state(state, action):
    with pytest.raises(InvalidTransition, match=f"cannot {action} a crawl that is {state}"):
        next_status(state, action)


def test_every_state_but_closed_has_a_way_forward():
    for status in CrawlStatus:
        if status is CrawlStatus.CLOSED:
            assert allowed_actions(status) == ()
        else:
            assert allowed_actions(status), status


def test_closed_is_reachable_from_new():
    # new -> running -> stopping -> resumable -> closed
    state = CrawlStatus.NEW
    for action in ("start", "stop", "saved", "close"):
        state = next_status(state, action)
    assert state is CrawlStatus.CLOSED
    assert all(isinstance(v, CrawlStatus) for v in TRANSITIONS.values())


def test_unknown_state_is_an_error():
    with pytest.raises(ValueError):
        next_status("paused", "start")
