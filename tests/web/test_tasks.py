"""The crawl's Celery tasks, called as functions, with the session's Redis keeping handled
envelope ids: messages need the shared token and a signed route, a queue server's inbox holds
a batch before the task returns, and a replayed batch or schedule is refused."""

import json
import re
import time

import pytest

from crawler.core.transport.shipping import seal
from crawler.tasks import fetch_schedule_task, inbox_for, qs_receive_task
from indexer.core.shard_token import message_key

BATCH = {"crawl": 123, "server": 1, "docs": [], "discovered": [["https://a.com/", 0, 0, "",
                                                                 0.0, 0, False, True, 0.0]]}
ROUTE = {"server": 1, "crawl": 123}


@pytest.fixture
def work(settings, tmp_path, redis_url):
    settings.WORK_DIRECTORY = tmp_path
    settings.REDIS_URL = redis_url
    return tmp_path


def stored(server=1, crawl=123):
    return [json.loads(item.payload) for item in inbox_for(server, crawl).take("batch")]


def test_inbox_write_is_durable_before_return(settings, work):
    sent = qs_receive_task(seal("batch", BATCH, message_key(settings.QUEUE_SERVER_TOKEN), route=ROUTE))
    assert sent["server"] == 1 and sent["crawl"] == 123 and len(sent["stored"]) == 32
    assert stored() == [BATCH]


@pytest.mark.parametrize("token", ["wrong", ""])
def test_messages_without_the_token_are_refused(settings, work, token):
    bad = (seal("batch", BATCH, token, route=ROUTE) if token
           else {"v": 2, "head": "{}", "body": "", "sig": ""})
    assert "refused" in qs_receive_task(bad)
    assert stored() == []
    refused = fetch_schedule_task(seal("schedule", {"id": "x"}, "wrong"))
    assert "refused" in refused


def test_a_batch_sent_as_a_schedule_is_refused(settings, work):
    message = seal("batch", BATCH, message_key(settings.QUEUE_SERVER_TOKEN), route=ROUTE)
    assert "refused" in fetch_schedule_task(message)


def test_a_replayed_batch_is_refused(settings, work):
    message = seal("batch", BATCH, message_key(settings.QUEUE_SERVER_TOKEN), route=ROUTE)
    assert "stored" in qs_receive_task(message)
    again = qs_receive_task(message)
    assert "replay" in again["refused"]
    assert stored() == [BATCH]  # one copy only


def test_routing_fields_come_only_from_the_signature(settings, work):
    message = seal("batch", BATCH, message_key(settings.QUEUE_SERVER_TOKEN), route=ROUTE)
    # routing fields beside the envelope (as version 1 sent them) are refused, not obeyed
    moved = qs_receive_task(message, server=0, crawl=7)
    assert "outside the signature" in moved["refused"]
    assert stored(0, 7) == [] and stored() == []
    # the refused copy was not handled: the same envelope still goes through
    assert "stored" in qs_receive_task(message)
    unrouted = seal("batch", BATCH, message_key(settings.QUEUE_SERVER_TOKEN))
    assert "no integer 'server'" in qs_receive_task(unrouted)["refused"]


def test_a_batch_whose_handling_failed_is_accepted_when_delivered_again(settings, work):
    """Nothing accepted is lost: an id is recorded only once its batch is in the inbox."""
    message = seal("batch", BATCH, message_key(settings.QUEUE_SERVER_TOKEN), route=ROUTE)
    blocked = work / "blocked"
    blocked.write_text("a file where the work directory should be")
    settings.WORK_DIRECTORY = blocked
    with pytest.raises(OSError):
        qs_receive_task(message)
    settings.WORK_DIRECTORY = work
    assert "stored" in qs_receive_task(message)
    assert stored() == [BATCH]


def test_a_replayed_schedule_is_not_fetched_again(settings, work, make_crawl):
    crawl = make_crawl()
    schedule = {"crawl": crawl.timestamp, "crawl_id": crawl.pk, "server": 0, "id": "s1",
                "round_size": 10, "reissue": 0, "entries": []}
    route = {"server": 0, "crawl": crawl.timestamp}
    message = seal("schedule", schedule, message_key(settings.QUEUE_SERVER_TOKEN), route=route)
    assert fetch_schedule_task(message) == {"skipped": "s1"}  # handled: the crawl is idle
    assert "replay" in fetch_schedule_task(message)["refused"]
    # a schedule whose body names another queue server or crawl than its signed route
    for other in ({**route, "server": 1}, {**route, "crawl": crawl.timestamp + 1}):
        mismatched = seal("schedule", schedule, message_key(settings.QUEUE_SERVER_TOKEN), route=other)
        assert "not its signed route" in fetch_schedule_task(mismatched)["refused"]


def test_an_old_envelope_is_refused(settings, work):
    settings.ENVELOPE_MAX_AGE = 7200.0
    old = seal("batch", BATCH, message_key(settings.QUEUE_SERVER_TOKEN), route=ROUTE,
               now=time.time() - 7300)
    assert re.search(r"sealed 730\d s ago, more than the 7200 s",
                     qs_receive_task(old)["refused"])
    assert stored() == []
