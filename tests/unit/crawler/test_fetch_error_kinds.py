"""The crawl's counters agree (issue 19): robots.txt fetches are not pages, so pages fetched
never pass the urls seen (121 pages fetched against 119 urls seen: two robots.txt) nor a page
limit (a limit of 250 gave 251); failed page downloads are counted by kind, with an example, from the fetcher's
outbox through the batch to the queue server's heartbeat, and survive its restart."""

from __future__ import annotations

import json

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.fetcher.outboxes import Outboxes
from crawler.core.fetcher.pages import PageHandler
from crawler.core.http import ERROR_KINDS, FetchResult, Misconfigured
from crawler.core.http.errors import ConnectionFailed, ReadTimeout
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.scheduler import ScheduleEntry
from crawler.core.transport import fetch_error_kinds
from crawler.core.transport.batch import FetcherBatch
from crawler.core.transport.fetch_error_kinds import FetchErrorKinds, error_kind, merge, rows

SITE = "http://127.0.0.1:8000"


def entry(path: str) -> ScheduleEntry:
    return ScheduleEntry(SITE + path, 0, 1.0, 0, 0.0, None, 0)


def handler(outboxes: Outboxes) -> PageHandler:
    # robots.txt answers and failed downloads never reach the processor
    return PageHandler(None, None, outboxes, clock=lambda: 0.0)  # type: ignore[arg-type]


def test_robots_txt_is_not_a_page_fetched() -> None:
    boxes = Outboxes(1)
    pages = handler(boxes)
    pages.handle(entry("/robots.txt"), FetchResult(SITE + "/robots.txt", "", status=200,
                                                   body=b"User-agent: *\n"), 0, lambda: None)
    pages.handle(entry("/robots.txt"), FetchResult(
        SITE + "/robots.txt", "", error=ConnectionFailed("connection reset")), 0, lambda: None)
    box = boxes.of(0)
    # the failed one is a fetch error, counted by kind among the robots.txt failures
    assert box.counters["pages_fetched"] == 0 and box.counters["fetch_errors"] == 1
    assert len(box.robots) == 2 and box.counters["bytes_downloaded"] == 14
    assert box.errors.kinds == {} and box.robots[1]["error"] == "connection"


def test_failed_pages_are_counted_by_kind_with_an_example() -> None:
    boxes = Outboxes(1)
    pages = handler(boxes)
    failures = [("/a", FetchResult(SITE + "/a", "", error=ConnectionFailed("reset by peer"))),
                ("/b", FetchResult(SITE + "/b", "", status=500)),
                ("/c", FetchResult(SITE + "/c", "", status=500)),
                ("/d", FetchResult(SITE + "/d", "", error=ReadTimeout("no byte in 2 s")))]
    for path, result in failures:
        assert pages.handle(entry(path), result, 0, lambda: None) == (True, 0)
    box = boxes.of(0)
    assert box.counters["pages_fetched"] == 4 and box.counters["fetch_errors"] == 4
    assert box.errors.to_json() == {
        "connection": {"count": 1, "url": SITE + "/a", "message": "reset by peer"},
        "http_500": {"count": 2, "url": SITE + "/b", "message": "answered HTTP 500"},
        "read_timeout": {"count": 1, "url": SITE + "/d", "message": "no byte in 2 s"}}
    ((_, batch),) = boxes.take_batches(1700000000, "s-1", 0, done=True)
    assert FetcherBatch.from_wire(json.loads(json.dumps(batch.to_wire()))).errors == \
        box.errors.to_json()


def test_kinds_of_answers() -> None:
    assert error_kind(200, None) is None and error_kind(404, None) is None
    assert error_kind(304, None) is None
    assert error_kind(403, None) == "http_403" and error_kind(0, "dns") == "dns"
    assert [r["label"] for r in rows({"http_503": {"count": 1, "url": "u", "message": "m"},
                                      "tls": {"count": 3, "url": "u", "message": "m"}})] == \
        ["TLS error", "HTTP 503"]


def test_reports_merge_and_malformed_ones_count_as_nothing() -> None:
    one, two = FetchErrorKinds(), FetchErrorKinds()
    one.record("dns", SITE + "/x", "no such host")
    two.record("dns", SITE + "/y", "no such host either", 2)
    two.record("http_502", SITE + "/z", "answered HTTP 502")
    total = merge([one.to_json(), None, {"dns": "garbage"}, two.to_json()])
    assert total == {"dns": {"count": 3, "url": SITE + "/x", "message": "no such host"},
                     "http_502": {"count": 1, "url": SITE + "/z",
                                  "message": "answered HTTP 502"}}
    beat = FetchErrorKinds.from_heartbeat(two.counts(), two.examples())
    assert beat.to_json() == two.to_json() and beat.total == 3


def test_queue_server_sums_batches_reports_them_and_keeps_them(tmp_path) -> None:
    crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t", seeds=(SeedSpec(SITE + "/"),))
    config = QueueServerConfig(0, 1, tmp_path, crawl, schedule_size=50)
    core = QueueServerCore(config)
    for errors in ({"http_500": {"count": 2, "url": SITE + "/b", "message": "answered HTTP 500"}},
                   {"http_500": {"count": 1, "url": SITE + "/c", "message": "answered HTTP 500"},
                    "connection": {"count": 1, "url": SITE + "/a", "message": "refused"}}):
        core.spool.put("batch", json.dumps({"crawl": 1700000000, "server": 0,
                                            "counters": {"fetch_errors": 3},
                                            "errors": errors}).encode())
    assert core.ingest() == 2
    stats = core.stats()
    assert stats["fetch_errors_by_kind"] == {"connection": 1, "http_500": 3}
    assert stats["fetch_error_examples"]["http_500"] == {"url": SITE + "/b",
                                                         "message": "answered HTTP 500"}
    core.close()
    again = QueueServerCore(config)
    assert again.stats()["fetch_errors_by_kind"] == {"connection": 1, "http_500": 3}
    again.close()


def test_failures_the_crawlers_settings_cause_name_the_setting():
    # issue 39, item 2: a crawl whose every fetch fails because of the engine's configuration
    # says which setting on its page (robots.txt failures and failed pages share the labels)
    assert ERROR_KINDS["configuration"] is Misconfigured
    assert "CRAWLER_CA_BUNDLE" in fetch_error_kinds.label("configuration")
    assert "CRAWLER_ALLOWED_NETWORKS" in fetch_error_kinds.label("egress_refused")
