"""Page recrawl in the crawl queue (issue 21, item 3): a visited url is due again
``recrawl_days`` later (a day of ``recrawl_day_seconds``), goes out with its validators and
the text hash of its indexed copy, and what a revisit replaced or removed is retired. Durable
through checkpoints and journal replay like the rest of the queue."""

from __future__ import annotations

from crawler.core.queue_server.freshness import freshness_figures
from crawler.core.scheduler import DiscoveredUrl
from crawler.core.scheduler.revisits import VisitRow
from indexer.core.ids import DocType, hash7, make_doc_id
from indexer.core.urls import url_hash

from .conftest import IGNORE, T0, drain

DAY = 10.0  # seconds: the queue's recrawl_day_seconds in these tests


def doc(url: str, text: str) -> bytes:
    return make_doc_id(url, DocType.PAGE, hash7(text), "a.com")


def visit(url: str, outcome: str, at: float, text: str | None = None, etag: str | None = None,
          modified: str | None = None, expires: float | None = None,
          partition: int = 0) -> VisitRow:
    return VisitRow(url, outcome, at, etag, expires, modified,
                    None if text is None else doc(url, text), 1, "d", 0, partition)


def recrawl_queue(make_queue, **overrides):  # type: ignore[no-untyped-def]
    return make_queue(robots=IGNORE, recrawl_days=2, recrawl_day_seconds=DAY, **overrides)


def first_visit(queue, urls: list[str]) -> None:  # type: ignore[no-untyped-def]
    queue.add_discovered(DiscoveredUrl(u, 1) for u in urls)
    assert sorted(drain(queue, T0)) == sorted(urls)


def test_a_visited_url_is_due_again_with_its_validators_and_text_hash(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = recrawl_queue(make_queue)
    first_visit(queue, ["http://a.com/1", "http://a.com/2"])
    queue.record_visits([
        visit("http://a.com/1", "new", T0, "one", etag='"e1"',
              modified="Mon, 01 Jan 2024 00:00:00 GMT"),
        visit("http://a.com/2", "new", T0 + 5, "two")])
    assert queue.next_schedule(T0 + 2 * DAY - 1) is None       # not due yet
    assert queue.next_revisit_at() == T0 + 2 * DAY
    schedule = queue.next_schedule(T0 + 2 * DAY)                # only the first is due
    (entry,) = schedule.entries
    assert (entry.url, entry.etag, entry.last_modified, entry.text_hash, entry.depth) == (
        "http://a.com/1", '"e1"', "Mon, 01 Jan 2024 00:00:00 GMT",
        hash7("one").hex(), 1)
    queue.acknowledge(schedule.id)
    assert drain(queue, T0 + 2 * DAY + 5) == ["http://a.com/2"]
    assert queue.stats().seen == 2 and dict(queue.stats().dropped).get("duplicate", 0) == 0


def test_revisits_are_not_counted_against_max_pages(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = recrawl_queue(make_queue, max_pages=1)
    first_visit(queue, ["http://a.com/1"])
    queue.record_visits([visit("http://a.com/1", "new", T0, "one")])
    assert drain(queue, T0 + 2 * DAY) == ["http://a.com/1"]


def test_a_gone_url_is_not_revisited_and_a_superseded_line_is_skipped(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = recrawl_queue(make_queue)
    first_visit(queue, ["http://a.com/gone", "http://a.com/twice"])
    queue.record_visits([visit("http://a.com/gone", "new", T0, "g"),
                         visit("http://a.com/twice", "new", T0, "t")])
    queue.record_visits([visit("http://a.com/gone", "gone", T0 + 1),
                         visit("http://a.com/twice", "unchanged", T0 + 1)])
    # two lines for /twice: the first (T0) is superseded by the visit at T0 + 1
    assert drain(queue, T0 + 2 * DAY) == []
    assert drain(queue, T0 + 2 * DAY + 1) == ["http://a.com/twice"]
    assert drain(queue, T0 + 100 * DAY) == []


def test_expires_ahead_counts_as_a_visit_and_waits_another_interval(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = recrawl_queue(make_queue)
    first_visit(queue, ["http://a.com/cached"])
    queue.record_visits([visit("http://a.com/cached", "new", T0, "c",
                               expires=T0 + 3 * DAY)])
    assert drain(queue, T0 + 2 * DAY) == []
    assert dict(queue.stats().dropped)["fresh"] == 1
    assert drain(queue, T0 + 4 * DAY - 1) == []
    assert drain(queue, T0 + 4 * DAY) == ["http://a.com/cached"]


def test_a_changed_copy_retires_the_old_one_and_a_removed_url_leaves(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = recrawl_queue(make_queue)
    a, b = "http://a.com/a", "http://a.com/b"
    first_visit(queue, [a, b])
    queue.record_visits([visit(a, "new", T0, "v1"), visit(b, "new", T0, "b1")])
    version, retired, removed = queue.retired()
    assert (retired, removed) == (set(), set())
    queue.record_visits([visit(a, "changed", T0 + 30, "v2", partition=3),
                         visit(b, "not_modified", T0 + 30)])
    version2, retired, removed = queue.retired()
    assert version2 > version and retired == {doc(a, "v1")} and removed == set()
    row = queue.visit_of(url_hash(a))
    assert (row.doc_id, row.partition, row.copy_at, row.outcome) == (doc(a, "v2"), 3,
                                                                     T0 + 30, "changed")
    assert queue.visit_of(url_hash(b)).copy_at == T0    # a 304 keeps the copy's age
    # the text comes back: the first copy is searchable again, the second retired
    queue.record_visits([visit(a, "changed", T0 + 60, "v1", partition=4)])
    assert queue.retired()[1] == {doc(a, "v2")}
    queue.record_visits([visit(b, "gone", T0 + 60), visit(a, "noindex", T0 + 90)])
    _, retired, removed = queue.retired()
    assert retired == {doc(a, "v2"), doc(a, "v1"), doc(b, "b1")}
    assert removed == {url_hash(a), url_hash(b)}
    figures = freshness_figures(queue.freshness(), T0 + 100)
    assert (figures["copies"], figures["gone"], figures["noindex"], figures["removed"]) == (
        0, 1, 1, 2)


def test_freshness_counts_copies_and_last_outcomes(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = recrawl_queue(make_queue)
    urls = [f"http://a.com/{i}" for i in range(5)]
    first_visit(queue, urls)
    queue.record_visits([visit(u, "new", T0 + i, f"t{i}") for i, u in enumerate(urls)])
    queue.record_visits([visit(urls[0], "changed", T0 + 50, "x"),
                         visit(urls[1], "unchanged", T0 + 50, "t1"),
                         visit(urls[2], "not_modified", T0 + 50),
                         visit(urls[3], "gone", T0 + 50)])
    figures = freshness_figures(queue.freshness(), T0 + 100)
    # copies fetched at T0+1, T0+2, T0+4 (kept) and T0+50 (the changed one)
    assert figures["copies"] == 4
    assert figures["median_age"] == 100 - 2.5          # lower median: T0+2, bucket middle
    assert figures["p90_age"] == 100 - 1.5
    assert {k: figures[k] for k in ("new", "changed", "unchanged", "not_modified", "gone",
                                    "removed", "unchanged_total")} == {
        "new": 1, "changed": 1, "unchanged": 1, "not_modified": 1, "gone": 1, "removed": 1,
        "unchanged_total": 2}


def test_revisits_survive_a_checkpoint_and_a_kill(make_queue, tmp_path) -> None:  # type: ignore[no-untyped-def]
    queue = recrawl_queue(make_queue)
    a, b = "http://a.com/a", "http://a.com/b"
    first_visit(queue, [a, b])
    queue.record_visits([visit(a, "new", T0, "v1", etag='"x"'), visit(b, "new", T0, "b")])
    queue.close()                                        # checkpoint
    queue = recrawl_queue(make_queue)
    queue.record_visits([visit(a, "changed", T0 + 1, "v2")])
    queue.abandon()                                      # kill -9: the journal replays it
    queue = recrawl_queue(make_queue)
    assert queue.retired()[1] == {doc(a, "v1")}
    assert queue.visit_of(url_hash(a)).etag == '"x"'
    assert drain(queue, T0 + 2 * DAY) == [b]              # a's first line is superseded
    assert drain(queue, T0 + 2 * DAY + 1) == [a]
    assert freshness_figures(queue.freshness(), T0 + 10)["copies"] == 2


def test_without_page_recrawl_only_the_copies_are_counted(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    first_visit(queue, ["http://a.com/1"])
    queue.record_visits([visit("http://a.com/1", "new", T0, "one"),
                         visit("http://a.com/2", "noindex", T0)])
    assert queue.visit_of(url_hash("http://a.com/1")) is None
    assert queue.retired()[1:] == (set(), set())
    assert drain(queue, T0 + 1000 * DAY) == []
    figures = freshness_figures(queue.freshness(), T0 + 60)
    assert (figures["copies"], figures["median_age"], figures["noindex"]) == (1, 59.5, 1)
