"""The batch a fetcher ships: built by the outboxes, read back by FetcherBatch.from_wire."""

from __future__ import annotations

import json

import pytest

from crawler.core.fetcher.outboxes import Outboxes, batch_item_bytes
from crawler.core.transport.batch import FetcherBatch
from crawler.core.transport.wire import WireError


def full_batch() -> FetcherBatch:
    return FetcherBatch(
        crawl=17, server=1, schedule="s-1", done=True,
        docs=({"url": "http://a.test/", "id": "AA==", "s": "c2", "c": "", "x": "eA=="},),
        discovered=(["http://b.test/", 1, 0, "http://a.test/", 1.0, 0, False, True, 0.5,
                     "normal", 0, "b"],),
        robots=({"origin": "http://a.test", "status": 404, "body": None},),
        host_errors={"http://c.test": 2}, fetched=(["http://a.test/", "e", 9.5],),
        deferred=(["http://d.test/", 1, 1.0, 0, "normal", 0],), stalls={"http://d.test": 1},
        hopeless=("http://d.test",), counters={"pages_fetched": 3})


def test_round_trip_through_json() -> None:
    batch = full_batch()
    assert FetcherBatch.from_wire(json.loads(json.dumps(batch.to_wire()))) == batch


def test_missing_keys_read_as_empty_and_hopeless_as_unknown() -> None:
    batch = FetcherBatch.from_wire({"crawl": 5})
    assert batch == FetcherBatch(crawl=5, server=None, hopeless=None)
    assert batch.docs == () and batch.counters == {} and not batch.done


@pytest.mark.parametrize("data", [
    [], {"server": 0}, {"crawl": "x"}, {"crawl": 1, "docs": {}},
    {"crawl": 1, "stalls": []}, {"crawl": 1, "counters": {"a": "many"}},
    {"crawl": 1, "hopeless": "http://a.test"},
])
def test_malformed_batches_raise_wire_errors(data) -> None:
    with pytest.raises(WireError):
        FetcherBatch.from_wire(data)


def test_outboxes_ship_the_schedules_own_server_last_and_always_when_done() -> None:
    boxes = Outboxes(num_servers=3)
    row = ["http://x.test/", 1, 0, "http://a.test/", 1.0, 0, False, True, 0.0, "normal", 0, ""]
    server = boxes.server_of(row[0])
    origin = (server + 1) % 3
    assert not boxes.put(boxes.of(server).discovered, row)
    batches = boxes.take_batches(crawl=9, schedule_id="s", origin_server=origin, done=True)
    assert [n for n, _ in batches] == [server, origin]
    other, own = batches[0][1], batches[1][1]
    assert other.discovered == (row,) and other.schedule is None and not other.done
    assert own.schedule == "s" and own.done and own.docs == ()
    assert boxes.take_batches(crawl=9, schedule_id="s", origin_server=origin, done=False) == []


def test_outboxes_say_when_their_bytes_reach_the_bound() -> None:
    doc = {"url": "http://a.test/", "s": "x" * 10, "c": "y" * 5, "x": "z" * 5}
    assert batch_item_bytes(doc) == 20
    boxes = Outboxes(num_servers=1, ship_bytes=40)
    assert not boxes.put(boxes.of(0).docs, doc)
    assert boxes.put(boxes.of(0).docs, doc)
