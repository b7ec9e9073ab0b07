"""The queue of an archive crawl on one queue server: schedules of record pointers.

Layer: ``crawler.core.archive``. Stands where a web crawl's :class:`~crawler.core.scheduler.
CrawlQueue` stands in :class:`~crawler.core.queue_server.server.QueueServerCore`, with the calls the
queue server makes of it (the web crawl's ones that mean nothing here, robots.txt, discovered
links, host politeness, are accepted and ignored: an archive crawl fetches nothing and follows
no link). It walks its source (:mod:`.listing`) as schedules are asked for, a bounded time per
call, keeps the records whose url's host this queue server owns (hash of the host, as for a web
crawl's urls), and hands them out ``schedule_size`` at a time as an :class:`ArchiveSchedule`:
urls, and one pointer per url. Outstanding schedules follow the web crawl's rules
(:class:`~crawler.core.scheduler.outstanding.ScheduleBook`: handed out again after their
deadline or when released, acknowledged by the batch marked done).

Each schedule has a sequence number: :mod:`.ordering` applies a schedule's documents only once
the schedules before it are done, so the index keeps the archive's order.

Files (``<queue server>/QueueBundle<ts>/archive.json``, written to a temporary name, fsynced and
renamed after every change): the source's file (or bundle) list as it was when the crawl
started, where the listing goes on, the records listed but not yet handed out, the outstanding
schedules with their pointers, counters, the records skipped by reason, and the freshness of
the copies indexed so far. A crawl stopped and resumed (or a queue server restarted) goes on
from there; its outstanding schedules are handed out again.

Freshness (:mod:`crawler.core.queue_server.freshness`): an archive crawl reads each record once, so
its copies' times are the records' capture times (a WARC record's date, an earlier crawl's fetch
time) and the outcome counts are those of the records read (``new``, ``noindex``, ``error``);
nothing is ever due again. A record is counted once: a visit counts only while its url is
among the outstanding schedules' urls not yet counted (:class:`Uncounted`), so a schedule
handed out again after its fetcher was lost, or a late copy of one already acknowledged,
counts nothing twice.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.core.archive.listing import Item, Listed, Other, Skip, StoredListing, WarcListing
from crawler.core.archive.skipped import NO_WARC_FILES, SkippedRecords
from crawler.core.archive.source import (
    ArchiveKind,
    ArchiveSource,
    Pointer,
    pointers_from_wire,
    pointers_to_wire,
)
from crawler.core.definition.schedules import LOCAL_SCHEDULE_SIZE, SCHEDULE_TIMEOUT
from crawler.core.queue_server.freshness import CopyTimes, freshness_report
from crawler.core.scheduler import QueueStats, Schedule, ScheduleEntry
from crawler.core.scheduler.outstanding import Outstanding, ScheduleBook
from crawler.core.transport.visits import INDEXED
from indexer.core.runtime.workdir import crawl_bundles
from indexer.core.urls import server_of_host, url_host

logger = logging.getLogger(__name__)

STATE_FILE = "archive.json"
STATE_VERSION = 1  # (freshness, added later, is optional in the file)
SCAN_SECONDS = 0.5  # the longest one call walks the source: the queue server's loop goes on


@dataclass(frozen=True, slots=True)
class ArchiveSchedule(Schedule):
    """A :class:`Schedule` of an archive crawl: ``pointers[i]`` is where ``entries[i]``'s
    record is; ``seq`` its place among the queue server's schedules (1, 2, ...)."""

    pointers: tuple[Pointer, ...] = ()
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ArchiveQueueConfig:
    server: int
    num_servers: int
    timestamp: int                 # the crawl's
    schedule_size: int = LOCAL_SCHEDULE_SIZE
    schedule_timeout: float = SCHEDULE_TIMEOUT
    max_pages: int = 0             # 0: every record

    @property
    def recrawl_enabled(self) -> bool:
        """An archive crawl reads each record once: it never revisits (page recrawl)."""
        return False


class Uncounted:
    """The urls of the outstanding schedules whose visits are not counted yet, by schedule (a
    url twice in a schedule, two captures of it, is counted twice)."""

    def __init__(self) -> None:
        self.by_schedule: dict[str, Counter[str]] = {}
        self.counted: dict[str, list[str]] = {}  # what is saved: the urls counted so far

    def add(self, schedule: Schedule, counted: Iterable[str] = ()) -> None:
        left = Counter(schedule.urls)
        done = list(counted)
        left.subtract(done)
        self.by_schedule[schedule.id] = +left
        self.counted[schedule.id] = done

    def take(self, url: str) -> bool:
        """Whether a visit of ``url`` is the first of an outstanding schedule's (then it is
        marked counted)."""
        for schedule_id, left in self.by_schedule.items():
            if left.get(url, 0) > 0:
                left[url] -= 1
                self.counted[schedule_id].append(url)
                return True
        return False

    def drop(self, schedule_id: str) -> None:
        self.by_schedule.pop(schedule_id, None)
        self.counted.pop(schedule_id, None)


def _entries(urls: Iterable[str]) -> tuple[ScheduleEntry, ...]:
    return tuple(ScheduleEntry(url, 0, 1.0, 0, 0.0, None, slot)
                 for slot, url in enumerate(urls))


class ArchiveQueue:
    """See the module. Not thread-safe (the queue server's loop owns it). A
    :class:`crawler.core.queue_server.source.QueueSource`, as the web crawl's queue is."""

    def __init__(self, root: Path, source: ArchiveSource, config: ArchiveQueueConfig,
                 clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self.source = source
        self.config = config
        self._clock = clock
        self.book = ScheduleBook()
        self.skipped = SkippedRecords()
        self.other: dict[str, int] = {}
        self.copies = CopyTimes()  # capture times of the copies indexed
        self.outcomes: dict[str, int] = {}  # records read, by what processing made of them
        self.uncounted = Uncounted()
        self.pending: list[tuple[str, Pointer]] = []
        self.position = (0, 0, 0)
        self.listed = self.scheduled = self.acknowledged = self.seq = 0
        self.done_listing = False
        self.hosts: set[str] = set()
        self.token = secrets.token_hex(3)
        self.names: list[str] = []
        self._items: Any = None  # the listing's generator, opened on first use
        self._dirty = False  # listed records not yet saved

    # --- opening and closing ----------------------------------------------------------------

    @classmethod
    def open(cls, root: str | os.PathLike[str], source: ArchiveSource,
             config: ArchiveQueueConfig, *, clock: Callable[[], float] = time.time
             ) -> ArchiveQueue:
        """Open the queue at ``root`` (made, and its source's files listed, the first time)."""
        queue = cls(Path(root), source, config, clock)
        queue.root.mkdir(parents=True, exist_ok=True)
        if (queue.root / STATE_FILE).exists():
            queue._load()
        else:
            queue.names = (source.warc_files() if source.kind is ArchiveKind.WARC
                           else _crawl_shards(Path(source.path), source.timestamp))
            if source.kind is ArchiveKind.WARC and not queue.names:  # said on the crawl page
                queue.skipped.record(NO_WARC_FILES, source.path, "no .warc or "
                                     ".warc.gz file was found there when the crawl started")
            queue._save()
        logger.info("archive queue %s: %s %s, %d files; %d records listed so far", root,
                    source.kind.value, source.path, len(queue.names), queue.listed)
        return queue

    def close(self) -> None:
        self._close_listing()
        self._save()

    def abandon(self) -> None:
        """Let go without writing (after a failed write): the last saved state stands."""
        self._close_listing()
        (self.root / (STATE_FILE + ".tmp")).unlink(missing_ok=True)

    def _close_listing(self) -> None:
        if self._items is not None:
            self._items.close()
            self._items = None

    def _save(self) -> None:
        out = [{"id": s.id, "seq": s.seq, "issued_at": s.issued_at, "deadline": s.deadline,
                "reissue": s.reissue, "urls": s.urls, "pointers": pointers_to_wire(s.pointers)}
               for s in self.book.all() if isinstance(s, ArchiveSchedule)]
        state = {"version": STATE_VERSION, "names": self.names, "position": self.position,
                 "done_listing": self.done_listing, "seq": self.seq, "token": self.token,
                 "listed": self.listed, "scheduled": self.scheduled,
                 "acknowledged": self.acknowledged, "hosts": sorted(self.hosts),
                 "pending": [[u, p.to_wire()] for u, p in self.pending], "outstanding": out,
                 "skipped": self.skipped.to_json(), "other": self.other,
                 "copies": self.copies.to_json(), "outcomes": self.outcomes,
                 "counted": self.uncounted.counted}
        self._dirty = False
        tmp = self.root / (STATE_FILE + ".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(state, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.root / STATE_FILE)

    def _load(self) -> None:
        state = json.loads((self.root / STATE_FILE).read_text(encoding="utf-8"))
        self.names = [str(n) for n in state["names"]]
        self.position = tuple(int(v) for v in state["position"])  # type: ignore[assignment]
        self.done_listing = bool(state["done_listing"])
        self.seq, self.token = int(state["seq"]), str(state["token"])
        self.listed, self.scheduled = int(state["listed"]), int(state["scheduled"])
        self.acknowledged = int(state["acknowledged"])
        self.hosts = set(state.get("hosts", []))
        self.pending = list(zip([str(u) for u, _ in state["pending"]],
                                pointers_from_wire([p for _, p in state["pending"]]),
                                strict=True))
        self.skipped = SkippedRecords.from_json(state.get("skipped"))
        self.other = {str(k): int(v) for k, v in state.get("other", {}).items()}
        self.copies = CopyTimes.from_json(state.get("copies"))
        self.outcomes = {str(k): int(v) for k, v in state.get("outcomes", {}).items()}
        now = self._clock()
        for row in state["outstanding"]:  # handed out again at once (no fetcher holds them)
            schedule = ArchiveSchedule(
                id=str(row["id"]), entries=_entries(row["urls"]), issued_at=float(
                    row["issued_at"]), deadline=min(float(row["deadline"]), now),
                round_size=self.config.schedule_size, reissue=int(row["reissue"]),
                pointers=pointers_from_wire(row["pointers"]), seq=int(row["seq"]))
            self.book.add(Outstanding(schedule, (), (), None))
            self.uncounted.add(schedule, state.get("counted", {}).get(schedule.id, ()))

    # --- the listing ------------------------------------------------------------------------

    def owns(self, url: str) -> bool:
        host = url_host(url) if "://" in url else ""
        if not host:  # a place in a file, not a url: the first queue server counts it
            return self.config.server == 0
        return server_of_host(host, self.config.num_servers) == self.config.server

    def _listing(self) -> Any:
        if self._items is None:
            if self.source.kind is ArchiveKind.WARC:
                listing: Any = WarcListing(self.source, self.names, self.position)
            else:
                listing = StoredListing(Path(self.source.path), self.source.timestamp,
                                        self.names, self.position)
            self._items = listing.items()
        return self._items

    def _take(self, item: Item) -> None:
        self.position = item.after
        self._dirty = True
        if isinstance(item, Listed):
            if self.owns(item.url):
                self.pending.append((item.url, item.pointer))
                self.listed += 1
                self.hosts.add(url_host(item.url))
        elif isinstance(item, Skip):
            if self.owns(item.url):
                self.skipped.record(item.reason, item.url, item.message)
        elif isinstance(item, Other) and self.config.server == 0:
            self.other[item.kind] = self.other.get(item.kind, 0) + 1

    def _fill(self, wanted: int) -> None:
        """List records until ``wanted`` are pending, the source ends, or SCAN_SECONDS."""
        deadline = time.monotonic() + SCAN_SECONDS
        listing = self._listing()
        while not self.done_listing and len(self.pending) < wanted:
            item = next(listing, None)
            if item is None:
                self.done_listing = True
                self._close_listing()
                break
            self._take(item)
            if time.monotonic() >= deadline:
                break

    # --- schedules --------------------------------------------------------------------------

    def _room(self) -> int:
        """How many more records may be handed out (the crawl's page limit)."""
        limit = self.config.max_pages
        return self.config.schedule_size if not limit else max(
            0, min(self.config.schedule_size, limit - self.scheduled))

    def next_schedule(self, now: float | None = None, requester: str | None = None,
                      unparked_only: bool = False) -> ArchiveSchedule | None:
        """The requester's unacknowledged schedule, else one whose deadline passed (handed
        out again), else the next records; None when there is nothing to hand out now (and
        always for ``unparked_only``: an archive has no crawl-delayed hosts)."""
        if unparked_only:
            return None
        now = self._clock() if now is None else now
        held = self.book.held_by(requester)
        if held is None:
            held = self.book.reissue_expired(now, self.config.schedule_timeout, requester)
            if held is not None:
                self._save()
        if held is not None:
            return held  # type: ignore[return-value]
        room = self._room()
        if room <= 0:
            return None
        self._fill(room)
        if not self.pending:
            if self._dirty:
                self._save()
            return None
        taken, self.pending = self.pending[:room], self.pending[room:]
        self.seq += 1
        schedule = ArchiveSchedule(
            id=f"a{self.config.timestamp}-{self.config.server}-{self.token}-{self.seq}",
            entries=_entries(u for u, _ in taken), issued_at=now,
            deadline=now + self.config.schedule_timeout, round_size=self.config.schedule_size,
            pointers=tuple(p for _, p in taken), seq=self.seq)
        self.book.add(Outstanding(schedule, (), (), requester))
        self.uncounted.add(schedule)
        self.scheduled += len(taken)
        self._save()
        return schedule

    def outstanding(self) -> list[Schedule]:
        return self.book.all()

    def free_hosts(self, schedule_id: str, origins: Iterable[str]) -> int:
        """Nothing to free: an archive's records are read, never requested of a host."""
        return 0

    def acknowledge(self, schedule_id: str) -> bool:
        out = self.book.pop(schedule_id)
        self.uncounted.drop(schedule_id)
        if out is None:
            return False
        self.acknowledged += 1
        self._save()
        return True

    def release(self, schedule_ids: Iterable[str]) -> int:
        released = self.book.release(list(schedule_ids), self._clock())
        if released:
            self._save()
        return len(released)

    def seq_waiting(self, schedule_id: str | None) -> int | None:
        """None when a batch of ``schedule_id`` may be applied now (no schedule, one no
        longer outstanding, or the first outstanding one); else the schedule's seq: its
        batches wait for the schedules before it (:mod:`.ordering`)."""
        if schedule_id is None:
            return None
        seqs = {s.id: s.seq for s in self.book.all() if isinstance(s, ArchiveSchedule)}
        seq = seqs.get(schedule_id)
        if seq is None or seq == min(seqs.values()):
            return None
        return seq

    def seq_may_apply(self, seq: int) -> bool:
        """Whether a batch held under ``seq`` may be applied now (see :meth:`seq_waiting`)."""
        seqs = [s.seq for s in self.book.all() if isinstance(s, ArchiveSchedule)]
        return seq not in seqs or seq == min(seqs)

    # --- what the queue server reports ------------------------------------------------------

    def stats(self) -> QueueStats:
        left = len(self.pending) + (0 if self.done_listing or self._room() <= 0 else 1)
        return QueueStats(tiers=((0, left),), robots_txt_queued=0, waiting_robots=0,
                          waiting_hosts=0, crawl_delayed=0, delayed_hosts=0, seen=self.listed,
                          scheduled=self.scheduled, outstanding_schedules=len(self.book),
                          acknowledged_schedules=self.acknowledged, hosts=len(self.hosts),
                          company_level_domains=0)

    def extra_stats(self, skipped: SkippedRecords) -> dict[str, Any]:
        """The archive's own figures for the heartbeat (see ``QueueServerCore.stats``): the
        records skipped are the listing's and ``skipped``, the fetchers'."""
        total = SkippedRecords.from_json(self.skipped.to_json())
        total.add(skipped)
        return {"archive_listed": self.listed, "archive_listing_done": self.done_listing,
                "archive_skipped": total.to_json(), "archive_other": dict(self.other),
                "archive_position": list(self.position), "archive_files": len(self.names),
                "archive_skipped_by_kind": total.counts()}  # /metrics exports it

    # --- calls of the web crawl that an archive crawl ignores --------------------------------

    def add_seeds(self, urls: Iterable[str]) -> int:
        return 0

    def reconfigure(self, config: Any) -> bool:
        return False  # an archive's records are read, not chosen by site rules

    def add_discovered(self, batch: Iterable[Any]) -> int:
        return 0

    def add_robots(self, host: str, rules: Any, status: int = 200) -> None:
        return None

    def report_host_errors(self, host: str, count: int) -> None:
        return None

    def record_fetched_many(self, items: Iterable[Any]) -> None:
        return None

    def requeue(self, entries: Iterable[Any]) -> int:
        return 0

    def set_needy_queries(self, queries: Iterable[Any]) -> bool:
        return False

    def set_host_override(self, host: str, min_delay: float, excluded: bool) -> bool:
        return False

    def host_politeness(self, host: str) -> tuple[float, bool, bool] | None:
        return None

    def take_refused(self) -> list[tuple[str, str]]:
        return []

    def record_visits(self, visits: Iterable[Any]) -> None:
        """Records read (:class:`crawler.core.scheduler.revisits.VisitRow`): counted by
        outcome, and the capture time of each one indexed kept for the copies' ages (saved
        with the next change of the queue: at the latest when its schedule is acknowledged).
        A record already counted, or not among the outstanding schedules', is not counted
        (see the module)."""
        for row in visits:
            if row.outcome == "unknown" or not self.uncounted.take(row.url):
                continue
            self.outcomes[row.outcome] = self.outcomes.get(row.outcome, 0) + 1
            if row.outcome in INDEXED and row.doc_id is not None:
                self.copies.add(row.fetched_at)
            self._dirty = True

    def next_revisit_at(self) -> float | None:
        return None

    def visit_of(self, url_hash: int) -> None:
        """Nothing is kept of a record read: it is never revisited."""
        return None

    def retired(self) -> tuple[int, set[bytes], set[int]]:
        return 0, set(), set()

    def freshness(self) -> dict[str, Any]:
        """The copies' capture times and the records by outcome (nothing is revisited)."""
        return freshness_report(self.copies, self.outcomes, 0, 0)


def _crawl_shards(work: Path, timestamp: int) -> list[str]:
    """The ``qs<n>`` folders holding crawl ``timestamp``'s bundles, in server order."""
    return [path.parent.name for path in crawl_bundles(work, timestamp)]


def schedule_message_fields(schedule: Schedule) -> dict[str, Any]:
    """What a schedule message adds for an archive schedule: its record pointers
    (``"archive"``, see :mod:`.source`); nothing for a web crawl's."""
    if isinstance(schedule, ArchiveSchedule):
        return {"archive": pointers_to_wire(schedule.pointers)}
    return {}
