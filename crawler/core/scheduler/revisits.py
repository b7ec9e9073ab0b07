"""Page recrawl: what the crawl queue keeps of each visited url, and when a url is due again.

Layer: ``crawler.core.scheduler``. The seed (*Yioop Search Engine Ranking Mechanisms*) lets
"pages be recrawled after a certain amount of time", keeping "HTTP Etag and Expires" headers
per url "on whether to expect a url to have changed or not since the last time it was
crawled". Here, with page recrawl on (Page Options ``page_recrawl_days`` > 0):

* the *visit table* (the ``EtagExpires`` table of the checkpoint) holds one :class:`UrlVisit`
  per visited url hash: its validators (ETag, Expires, Last-Modified), the doc_id of its copy
  in the index, the newest partition that copy can be in, when that copy was fetched, when the
  url was last visited and what that visit found (:mod:`crawler.core.transport.visits`);
* every visit but a ``gone`` one puts the url at the end of the *revisit lane*, a FIFO url file
  (``UrlQueue/Revisit``, :mod:`.lanes`) of ``visited_at, url, depth, policy, policy depth``
  lines. Every url has the same interval, so the lane is in due order: a schedule request at
  ``now`` releases the urls at its head visited at least ``recrawl_days * recrawl_day_seconds``
  before ``now`` into the crawl order (tier 0, past the Bloom filter, not counted against
  ``max_pages``); a line whose url was visited again since (its table row has another
  ``visited_at``) is skipped, and a url whose Expires is still ahead is counted as visited now
  (``dropped_fresh``) and waits another interval. The schedule entry of a released url carries
  its ETag, Last-Modified and the text hash of its copy (:mod:`.builder`), so the fetcher asks
  conditionally and re-indexes only a changed page;
* the *retired set*: doc_ids of copies a newer copy replaced, or of pages that are now 404/410
  or noindex, and the url hashes of those removed urls (every document filed under such a url
  leaves the results). The queue server publishes it beside its index
  (:mod:`indexer.core.bundle.retired`), where search leaves those documents out.

Whether recrawl is on or not, the fetch times of the copies in the index (a
:class:`crawler.core.queue_server.freshness.CopyTimes`) and the urls by the outcome of their last
visit are counted here, for the crawl page's freshness figures. Everything changes only through
:meth:`Revisits.record` and :meth:`Revisits.release`, called by :class:`.machine.QueueMachine`
with times from journal records, so a replayed journal reproduces it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from crawler.core.queue_server.freshness import CopyTimes
from crawler.core.scheduler.lanes import Lane, LaneContext, LaneState
from crawler.core.scheduler.record import QueuedUrl
from indexer.core.urls import url_hash

REVISIT_DIR = "UrlQueue/Revisit"
INDEXED = frozenset({"new", "changed"})
REMOVED = frozenset({"gone", "noindex"})


@dataclass(frozen=True, slots=True)
class UrlVisit:
    """One url's row of the visit table (see the module docstring). ``partition`` is the
    active index partition when its copy was appended (the copy is in it or an earlier one);
    ``copy_at`` None: no copy of the url is in the index."""

    etag: str | None
    expires: float | None
    last_modified: str | None = None
    doc_id: bytes | None = None
    partition: int = -1
    copy_at: float | None = None
    visited_at: float = 0.0
    outcome: str = "unknown"

    @property
    def text_hash(self) -> str | None:
        """The hex text hash of the copy in the index (doc_id bytes 9-15)."""
        return None if self.doc_id is None else self.doc_id[9:16].hex()

    def to_row(self, h: int) -> list[Any]:
        return [h, self.etag, self.expires, self.last_modified,
                None if self.doc_id is None else self.doc_id.hex(), self.partition,
                self.copy_at, self.visited_at, self.outcome]

    @classmethod
    def from_row(cls, row: list[Any]) -> tuple[int, UrlVisit]:
        """``(url hash, visit)`` of a table row; a three-item row ``[h, etag, expires]`` is
        the table written before visits were kept."""
        if len(row) == 3:
            return int(row[0]), cls(row[1], row[2])
        h, etag, expires, modified, doc, partition, copy_at, visited_at, outcome = row
        return int(h), cls(etag, expires, modified, None if doc is None else bytes.fromhex(doc),
                           int(partition), copy_at, float(visited_at), str(outcome))


Validators = dict[int, UrlVisit]


@dataclass(frozen=True, slots=True)
class VisitRow:
    """A visit as the journal keeps it (a ``fetched`` record's row), from the queue server:
    :class:`crawler.core.transport.visits.Visit` with the policy as its code and the index partition
    active after its documents were appended."""

    url: str
    outcome: str
    fetched_at: float
    etag: str | None
    expires: float | None
    last_modified: str | None
    doc_id: bytes | None
    depth: int
    policy: str
    policy_depth: int
    partition: int

    def to_journal(self) -> tuple[Any, ...]:
        return (self.url, self.outcome, self.fetched_at, self.etag, self.expires,
                self.last_modified, None if self.doc_id is None else self.doc_id.hex(),
                self.depth, self.policy, self.policy_depth, self.partition)

    @classmethod
    def from_journal(cls, row: Any) -> VisitRow:
        """A journal row; the three-item rows of older journals ``(url, etag, expires)``
        read as visits of unknown outcome."""
        if len(row) == 3:
            return cls(str(row[0]), "unknown", 0.0, row[1], row[2], None, None, 0, "d", 0, -1)
        (url, outcome, fetched_at, etag, expires, modified, doc, depth, policy, policy_depth,
         partition) = row
        return cls(str(url), str(outcome), float(fetched_at), etag, expires, modified,
                   None if doc is None else bytes.fromhex(doc), int(depth), str(policy),
                   int(policy_depth), int(partition))


class Revisits:
    """The revisit lane, the retired set and the freshness counts of one crawl queue (see
    the module docstring). ``version`` changes whenever the retired set does."""

    def __init__(self, ctx: LaneContext) -> None:
        self.lane = Lane(ctx, REVISIT_DIR)
        self.head: str | None = None   # a line taken from the lane, not yet due
        self.retired: set[bytes] = set()
        self.removed: set[int] = set()
        self.version = 0
        self.copies = CopyTimes()
        self.outcomes: dict[str, int] = {}
        self.released = 0

    def __len__(self) -> int:
        """Urls waiting in the lane (some may be superseded lines)."""
        return len(self.lane) + (self.head is not None)

    # -- visits -----------------------------------------------------------------------------

    def record(self, rows: list[VisitRow], table: Validators, keep_table: bool) -> None:
        """Apply visits: update the copy times and outcome counts, and with ``keep_table``
        (page recrawl on) the visit table, the retired set and the lane."""
        for row in rows:
            h = url_hash(row.url)
            old = table.get(h) if keep_table else None
            new = self._merge(h, row, old, keep_table)
            if new.outcome != "unknown":
                if old is not None and old.outcome != "unknown":
                    self.outcomes[old.outcome] = self.outcomes.get(old.outcome, 1) - 1
                self.outcomes[new.outcome] = self.outcomes.get(new.outcome, 0) + 1
            if old is not None and old.copy_at is not None and old.copy_at != new.copy_at:
                self.copies.remove(old.copy_at)
            if new.copy_at is not None and (old is None or old.copy_at != new.copy_at):
                self.copies.add(new.copy_at)
            if not keep_table:
                continue
            table[h] = new
            if row.outcome != "unknown" and new.outcome != "gone":
                self.lane.push(f"{new.visited_at!r}\t{row.url}\t{row.depth}\t{row.policy}"
                               f"\t{row.policy_depth}")

    def _merge(self, h: int, row: VisitRow, old: UrlVisit | None, track: bool) -> UrlVisit:
        """The url's new table row after ``row``; with ``track``, retires what it
        replaces (without page recrawl nothing is ever replaced, and nothing retired)."""
        etag = row.etag if row.etag is not None or old is None else old.etag
        modified = (row.last_modified if row.last_modified is not None or old is None
                    else old.last_modified)
        outcome = row.outcome
        if outcome in INDEXED and row.doc_id is not None:
            if old is not None and old.doc_id is not None:
                if old.doc_id == row.doc_id:
                    return UrlVisit(etag, row.expires, modified, old.doc_id, old.partition,
                                    old.copy_at, row.fetched_at, "unchanged")
                self._retire(old.doc_id)
                outcome = "changed"
            if track:
                self._restore(row.doc_id, h)
            return UrlVisit(etag, row.expires, modified, row.doc_id, row.partition,
                            row.fetched_at, row.fetched_at, outcome)
        if outcome in REMOVED:
            if old is not None and old.doc_id is not None:
                self._retire(old.doc_id)
            if track and h not in self.removed:
                self.removed.add(h)
                self.version += 1
            return UrlVisit(etag, row.expires, modified, None, -1, None, row.fetched_at,
                            outcome)
        if old is None:
            return UrlVisit(etag, row.expires, modified, None, -1, None, row.fetched_at,
                            outcome)
        if outcome == "unknown":  # validators only (an older fetcher's row)
            return UrlVisit(etag, row.expires, modified, old.doc_id, old.partition,
                            old.copy_at, old.visited_at, old.outcome)
        return UrlVisit(etag, row.expires, modified, old.doc_id, old.partition, old.copy_at,
                        row.fetched_at, outcome)

    def _retire(self, doc_id: bytes) -> None:
        if doc_id not in self.retired:
            self.retired.add(doc_id)
            self.version += 1

    def _restore(self, doc_id: bytes, h: int) -> None:
        """A copy indexed now: it (and its url) is searchable again."""
        if doc_id in self.retired:
            self.retired.discard(doc_id)
            self.version += 1
        if h in self.removed:
            self.removed.discard(h)
            self.version += 1

    # -- due urls ---------------------------------------------------------------------------

    def next_due(self, interval: float) -> float | None:
        """When the head of the lane is due (None: the lane is empty). May move the lane's
        first line into ``head``, which changes nothing the queue does."""
        if self.head is None:
            self.head = self.lane.pop()
        if self.head is None:
            return None
        return float(self.head[:self.head.find("\t")]) + interval

    def release(self, now: float, interval: float, table: Validators,
                push: Callable[[QueuedUrl], None], fresh: Callable[[], None]) -> int:
        """Put every url due at ``now`` into the crawl order (``push``); returns how many.
        Superseded lines are skipped; a url whose Expires is ahead is visited-by-Expires
        (``fresh`` counts it) and goes back to the end of the lane."""
        released = 0
        while True:
            due = self.next_due(interval)
            if due is None or due > now:
                return released
            line, self.head = self.head, None
            assert line is not None
            visited, url, depth, policy, policy_depth = line.split("\t")
            h = url_hash(url)
            visit = table.get(h)
            if visit is None or visit.visited_at != float(visited) or visit.outcome == "gone":
                continue
            if visit.expires is not None and visit.expires > now:
                fresh()
                table[h] = UrlVisit(visit.etag, visit.expires, visit.last_modified,
                                    visit.doc_id, visit.partition, visit.copy_at, now,
                                    visit.outcome)
                self.lane.push(f"{now!r}\t{url}\t{depth}\t{policy}\t{policy_depth}")
                continue
            push(QueuedUrl(url, int(depth), 0.0, 0, 0, 0.0, policy, int(policy_depth)))
            released += 1
            self.released += 1

    # -- checkpoints ------------------------------------------------------------------------

    def checkpoint(self) -> tuple[dict[str, Any], list[str]]:
        """(the state a checkpoint records, url files no longer needed)."""
        lane, garbage = self.lane.checkpoint()
        return {"lane": lane, "head": self.head, "retired": sorted(self.retired),
                "removed": sorted(self.removed), "version": self.version,
                "copies": self.copies.to_json(), "outcomes": dict(self.outcomes),
                "released": self.released}, garbage

    def restore(self, ctx: LaneContext, state: dict[str, Any] | None) -> None:
        """Take back a checkpoint's state (None: a checkpoint written before page recrawl
        kept any: an empty lane and nothing retired)."""
        if not state:
            state = Revisits(ctx).checkpoint()[0]
        lane: LaneState = state["lane"]
        self.lane = Lane(ctx, REVISIT_DIR, lane)
        self.head = state["head"]
        self.retired = set(state["retired"])
        self.removed = set(state["removed"])
        self.version = int(state["version"])
        self.copies = CopyTimes.from_json(state["copies"])
        self.outcomes = {str(k): int(v) for k, v in state["outcomes"].items()}
        self.released = int(state["released"])
