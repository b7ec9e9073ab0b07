"""Rounds: a schedule's plain (not crawl-delayed) urls, downloaded a round at a time, one
round ahead of the processing.

Layer: ``crawler.core.fetcher``. The worker makes one :class:`Rounds` per schedule and calls
:meth:`Rounds.run`; every download ends up in the worker's ``handle`` (a page, a robots.txt
answer, or a blocked download that came in late), except downloads of stalled hosts, which go
back to the queue server (``ScheduleStats.deferred``).

As the seed (*Yioop Search Engine Ranking Mechanisms*) describes it, a schedule is downloaded a round
(about 100 urls) at a time, concurrently. Here the next round downloads (in a helper thread)
while this one is processed, so the network wait and the processing overlap, unless this
round's bodies hold :data:`AHEAD_BODY_BYTES` (two such rounds at once set a fetcher's peak
memory). A round ends when its downloads have finished or every one still in flight is
blocked (:func:`crawler.core.http.round.download_round`); blocked downloads (*stragglers*)
finish in the background and are handled when they do, and their hosts' remaining urls are
deferred. robots.txt requests (new hosts: each may wait on DNS) do not hold up their round:
they run in their own pool and are handled as they arrive, all of them before the rounds end.
Between rounds ``should_continue()`` is asked whether the crawl still runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from concurrent.futures import wait as wait_for_futures

from crawler.core.fetcher.stats import ScheduleStats
from crawler.core.http import Cancelled, FetchResult
from crawler.core.http.client import CANCEL_POLL
from crawler.core.http.hostwatch import HostWatch
from crawler.core.http.round import Download, held_bytes
from crawler.core.scheduler import ScheduleEntry
from crawler.core.urls import origin_of

# The next round downloads while this one is processed, unless this one's bodies hold this
# many bytes (a round of an API reference's biggest pages holds 100 MB at a 4 MB byte range;
# a round of ordinary pages about 5 MB)
AHEAD_BODY_BYTES = 16 << 20

Handle = Callable[[ScheduleEntry, Download, bool], None]
"""Handles one finished download; the flag says it was blocked (a straggler)."""


class Rounds:
    """The round pipeline of one schedule. ``download`` fetches a round's urls (returning a
    result or, for a blocked download, a future, per url); ``fetch_robots`` fetches one
    robots.txt; ``ahead`` runs one round's download ahead, ``robots_pool`` the robots.txt
    requests; ``poll`` is called whenever finished work is collected (the worker collects its
    crawl-delay lanes' results then). Used from the schedule's main thread only."""

    def __init__(self, rounds: Iterable[list[ScheduleEntry]], *, stats: ScheduleStats,
                 watch: HostWatch, skip: frozenset[str],
                 download: Callable[[list[ScheduleEntry]], list[Download | Future[Download]]],
                 fetch_robots: Callable[[ScheduleEntry], FetchResult],
                 should_continue: Callable[[], bool], ahead: Executor,
                 robots_pool: Executor, handle: Handle, poll: Callable[[], None]) -> None:
        self._rounds = iter(rounds)
        self._stats = stats
        self._watch = watch
        self._skip = skip
        self._download = download
        self._fetch_robots = fetch_robots
        self._continue = should_continue
        self._ahead = ahead
        self._robots_pool = robots_pool
        self._handle = handle
        self._poll = poll
        self.state = "more"   # "more" rounds to submit, their "end", or "stopped" (crawl)
        self._pending: deque[tuple[list[ScheduleEntry],
                                   Future[list[Download | Future[Download]]]]] = deque()
        self._robots: list[tuple[ScheduleEntry, Future[FetchResult]]] = []
        self._stragglers: list[tuple[ScheduleEntry, Future[Download]]] = []

    @property
    def stopped(self) -> bool:
        return self.state == "stopped"

    def run(self) -> None:
        """Download and handle every round, and every robots.txt request; stragglers may be
        left (see :meth:`collect_finished` and :meth:`settle_stragglers`)."""
        self._advance()
        while self._pending or self._robots or self._stragglers:
            if not self._pending:
                if self.state == "more":
                    self._advance()
                    continue
                self.collect_finished(wait=False)
                if self._robots:
                    self.collect_finished(wait=True)
                break
            self._handle_round(*self._pending.popleft())

    def _handle_round(self, entries: list[ScheduleEntry],
                      future: Future[list[Download | Future[Download]]]) -> None:
        results = future.result()
        # blocked downloads were recorded as stalls by download_round, so the next round
        # (chosen now) already leaves their hosts out. A round whose bodies are big is handled
        # before the next one downloads (started below).
        held = sum(held_bytes(r) for r in results if not isinstance(r, Future))
        if held < AHEAD_BODY_BYTES:
            self._advance()
        for i, entry in enumerate(entries):
            result, results[i] = results[i], None  # each body goes once handled
            if isinstance(result, Future):
                self._stragglers.append((entry, result))
                continue
            self._handle(entry, result, False)
        result = None  # nor is the last one kept meanwhile
        self.collect_finished(wait=False)
        if not self._pending:
            self._advance()  # the round held back above

    def _advance(self) -> None:
        """Submit the next round that has urls to download, if there are more."""
        if self.state == "more":
            self.state = self._submit_next()

    def _submit_next(self) -> str:
        for round_entries in self._rounds:
            if not self._continue():
                return "stopped"
            entries = list(self._admitted(round_entries))
            if entries:
                self._pending.append((entries, self._ahead.submit(self._download, entries)))
                return "more"
        return "end"

    def _admitted(self, round_entries: list[ScheduleEntry]) -> Iterator[ScheduleEntry]:
        """The round's urls to download now. Urls of a host failing in this schedule are left
        out, of a host the queue server dropped skipped; robots.txt requests start in their
        pool; urls of a stalled host are deferred (the queue server has them again)."""
        stats = self._stats
        for entry in round_entries:
            origin = origin_of(entry.url)
            if stats.failing(origin):
                continue
            if origin in self._skip:
                stats.skipped += 1
            elif entry.is_robots:
                self._robots.append((entry, self._robots_pool.submit(self._fetch_robots, entry)))
            elif self._watch.stalled(origin):
                stats.deferred.append(entry)
            else:
                yield entry

    def collect_finished(self, wait: bool) -> None:
        """Handle the robots.txt answers that came in (``wait``: all of them) and the
        stragglers that finished, then ``poll``."""
        keep = []
        for entry, future in self._robots:
            if wait or future.done():
                self._handle(entry, future.result(), False)
            else:
                keep.append((entry, future))
        self._robots[:] = keep
        late = []
        for entry, future in self._stragglers:
            if future.done():
                self._finish_straggler(entry, future.result())
            else:
                late.append((entry, future))
        self._stragglers[:] = late
        self._poll()

    def _finish_straggler(self, entry: ScheduleEntry, result: Download) -> None:
        if isinstance(result, FetchResult) and isinstance(result.error, Cancelled):
            self._stats.deferred.append(entry)  # never sent: its host was stalled
        else:
            self._handle(entry, result, True)

    def settle_stragglers(self) -> None:
        """At the schedule's end: downloads still blocked are not waited for (those waiting
        for a slot end within CANCEL_POLL): their urls go back to the queue like the host's
        other remaining urls (a result that comes later is dropped; the page deadline ends
        it). A host that keeps stalling is dropped by the queue server, so a trickling url is
        not tried for ever."""
        if self._stragglers:
            wait_for_futures([future for _, future in self._stragglers], timeout=4 * CANCEL_POLL)
        for entry, future in self._stragglers:
            if future.done():
                self._finish_straggler(entry, future.result())
            else:
                self._stats.deferred.append(entry)
                self._stats.abandoned.append(entry.url)  # requested: a try (see batch.py)
        self._stragglers.clear()
