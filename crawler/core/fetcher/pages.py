"""Handling one download: process the page and put what it yields in the outboxes.

Layer: ``crawler.core.fetcher``. The worker hands each finished download to
:meth:`PageHandler.start`, and the answer, in the order the downloads came, to
:meth:`PageHandler.finish`. A robots.txt answer becomes robots data for the schedule's own
queue server; every page download a fetched row (:class:`crawler.core.transport.visits.Visit`: what
the visit found, the page's validators and document; a failed one without validators, and an
error); a revisit whose page has the text hash of the copy in the index makes no documents
and no links (it costs no re-indexing); every
download a row of the schedule's fetch log (status, bytes, time, error kind), and a url refused
by the egress allow-list or a robots meta's noindex a refused row (``FetcherBatch.log`` and
``refused``, for the admin's url and host pages); a page (and
each redirect hop before it, as a location document) is processed by the crawl's
:class:`.processing.PageProcessing` (inline, or in worker processes: the CPU-heavy part; a page
past its CPU budget is a failed page of kind ``too_slow``) into
index documents (the page itself, and one link document per outlink, filed under the link's
target: ``crawler.core.processing.indexing``), and its links into discovered urls (:mod:`.emit`),
each put in the outbox of the queue server that owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from crawler.core.fetcher.budget_pool import TooSlow
from crawler.core.fetcher.emit import LinkEmitter
from crawler.core.fetcher.outboxes import Outboxes
from crawler.core.fetcher.processing import PageJob, PageOutput, PageProcessing
from crawler.core.http import FetchResult
from crawler.core.scheduler import ScheduleEntry
from crawler.core.transport.fetch_error_kinds import error_kind
from crawler.core.transport.visits import INDEXED, Outcome, Visit, outcome_of
from crawler.core.urls import origin_of
from indexer.core.ids import make_doc_id

Ship = Callable[[], None]
"""Ships the outboxes now (the schedule's batches so far)."""


@dataclass(slots=True)
class Handling:
    """A download on its way through :class:`PageHandler`: handled already (``failed``) or
    waiting for its page's processing (``output``)."""

    entry: ScheduleEntry
    result: FetchResult
    origin_server: int
    failed: bool = False
    output: Future[PageOutput] | None = None

    def ready(self) -> bool:
        return self.output is None or self.output.done()


class PageHandler:
    """Processes downloads of one schedule into its outboxes. Not thread-safe: one schedule's
    main thread calls :meth:`start` and :meth:`finish` (the processing itself may run
    elsewhere)."""

    def __init__(self, processing: PageProcessing, links: LinkEmitter, outboxes: Outboxes,
                 clock: Callable[[], float]) -> None:
        self._processing = processing
        self._links = links
        self._outboxes = outboxes
        self._clock = clock

    def handle(self, entry: ScheduleEntry, result: FetchResult, origin_server: int,
               ship: Ship, fetched_at: float | None = None) -> tuple[bool, int]:
        """:meth:`start` and :meth:`finish` at once (waiting for the processing)."""
        return self.finish(self.start(entry, result, origin_server, fetched_at), ship)

    def start(self, entry: ScheduleEntry, result: FetchResult, origin_server: int,
              fetched_at: float | None = None) -> Handling:
        """Log one download; a robots.txt answer, a failed download, a 304 or an HTTP error
        is handled at once, a page is sent to be processed. ``fetched_at``: when the page
        was fetched, if not now (an archive crawl's record, its capture time)."""
        own = self._outboxes.of(origin_server)
        own.counters["bytes_downloaded"] += len(result.body)
        error = result.error
        own.log.append([entry.url, 0 if error is not None else result.status, len(result.body),
                        self._clock(), "" if error is None else error.kind])
        if error is not None and error.kind == "egress_refused":
            own.refused.append([entry.url, "egress", error.message[:200]])
        handling = Handling(entry, result, origin_server)
        if entry.is_robots:  # counted apart: robots.txt is not a page of the crawl
            handling.failed = self._robots(entry, result, origin_server)
            return handling
        own.counters["pages_fetched"] += 1
        kind = error_kind(result.status, None if result.error is None else result.error.kind)
        if kind is not None:
            own.counters["fetch_errors"] += 1
            message = (result.error.message if result.error is not None
                       else f"answered HTTP {result.status}")
            own.errors.record(kind, entry.url, message)
            status = 0 if result.error is not None else result.status
            own.fetched.append(self._visit(entry, result, outcome_of(
                status, True, False, None, entry.text_hash), validators=False).to_wire())
            handling.failed = True
            return handling
        if result.status == 304 or result.status >= 400:
            own.fetched.append(self._visit(entry, result, outcome_of(
                result.status, False, False, None, entry.text_hash)).to_wire())
            return handling
        handling.output = self._processing.submit(PageJob(
            url=result.final_url or entry.url, body=result.body, status=result.status,
            headers=dict(result.headers),
            fetched_at=self._clock() if fetched_at is None else fetched_at,
            download_time=result.elapsed, ip=result.ip or "",
            redirects=tuple((hop.source, hop.status, hop.target) for hop in result.redirects),
            previous_hash=entry.text_hash,
            entry=entry if self._processing.emits_links and self._links.portable else None))
        return handling

    def finish(self, handling: Handling, ship: Ship) -> tuple[bool, int]:
        """Put a started download's documents and links in the outboxes (waiting for its
        processing); returns (was an error, documents produced).

        A page whose documents and links pass the batch bound by themselves (an index page with
        thousands of links) is shipped in parts, by ``ship``. Its url is recorded as fetched
        only with its last part: a fetcher killed in between has not told its queue server
        that the page was fetched, so the page is fetched again with its schedule."""
        if handling.output is None:
            return handling.failed, 0
        entry = handling.entry
        try:
            page = handling.output.result()
        except TooSlow as exc:  # past the CPU budget: a failed page, the crawl goes on
            return self._too_slow(handling, str(exc)), 0
        produced = 0
        for url, document in page.documents:
            self._put("docs", url, document, ship)
            produced += 1
        refused = self._outboxes.of(handling.origin_server).refused
        if page.discovered is not None:  # made where the page was processed
            for row in page.discovered:
                self._put("discovered", row[0], row, ship)
            refused.extend(page.refused)
        elif page.outcome is not Outcome.UNCHANGED and page.links is not None:
            for row in self._links.discovered(page.links, entry, refused):
                self._put("discovered", row[0], row, ship)
        if not page.indexable:
            refused.append([page.url, "noindex",
                            "robots meta: " + " ".join(sorted(page.robot_metas))])
        doc_id = (make_doc_id(page.url, page.doc_type, page.text_hash, page.host)
                  if page.outcome in INDEXED else None)
        # (a part may have gone)
        self._outboxes.of(handling.origin_server).fetched.append(
            self._visit(entry, handling.result, page.outcome, doc_id, page.fetched_at,
                        simhash=page.simhash if doc_id is not None else 0,
                        title_tag=page.title_tag).to_wire())
        return False, produced

    def _too_slow(self, handling: Handling, message: str) -> bool:
        """Record a page whose processing passed its CPU budget as failed, of kind
        ``too_slow`` (a failed visit, as a download error: not processed again at once)."""
        own = self._outboxes.of(handling.origin_server)
        entry = handling.entry
        own.counters["fetch_errors"] += 1
        own.errors.record(TooSlow.kind, entry.url, message)
        own.fetched.append(self._visit(entry, handling.result, outcome_of(
            0, True, False, None, entry.text_hash), validators=False).to_wire())
        return True

    def _visit(self, entry: ScheduleEntry, result: FetchResult, outcome: Outcome,
               doc_id: bytes | None = None, fetched_at: float | None = None,
               validators: bool = True, simhash: int = 0, title_tag: int = 0) -> Visit:
        """The fetched row of ``entry``'s download (:mod:`crawler.core.transport.visits`); a failed
        download's answer gives no validators; ``simhash``, ``title_tag``: the indexed page's."""
        ok = result.error is None and validators
        return Visit(entry.url, outcome, result.status if ok else 0,
                     self._clock() if fetched_at is None else fetched_at,
                     result.etag if ok else None, result.expires_at if ok else None,
                     result.last_modified if ok else None, doc_id, entry.depth, entry.policy,
                     entry.policy_depth, simhash, title_tag)

    def _robots(self, entry: ScheduleEntry, result: FetchResult, origin_server: int) -> bool:
        """A robots.txt answer becomes robots data for the schedule's own queue server; a
        failed one (its host is then disallowed) names its error's kind and message, and is
        a fetch error (by kind among the queue server's robots_failures, not among the
        pages: robots.txt is not a page fetched). Returns whether it failed without an
        answer."""
        own = self._outboxes.of(origin_server)
        error = result.error
        status = 0 if error is not None else result.status
        body = result.body.decode("utf-8", "replace") if 200 <= status < 300 else None
        item: dict[str, Any] = {"origin": origin_of(entry.url), "status": status, "body": body}
        if error is not None:
            item["error"], item["message"] = error.kind, error.message
        if error is not None or (status >= 400 and status != 404):
            own.counters["fetch_errors"] += 1  # by kind: the queue server's robots_failures
        own.robots.append(item)
        return error is not None

    def _put(self, kind: str, url: str, item: dict[str, Any] | list[Any], ship: Ship) -> None:
        box = self._outboxes.of(self._outboxes.server_of(url))
        if self._outboxes.put(getattr(box, kind), item):
            ship()
