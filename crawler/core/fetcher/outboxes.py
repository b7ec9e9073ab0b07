"""Outboxes: what a fetcher has found for each queue server, until it is shipped as batches.

Layer: ``crawler.core.fetcher``. The page handling (:mod:`.pages`) puts documents, discovered
urls, robots data and fetched rows in the outbox of the queue server that owns each (documents
by their url's host, discovered urls by the target's host; robots data, fetched rows and host
errors go to the schedule's own queue server); the worker turns them into
:class:`~crawler.core.transport.batch.FetcherBatch` es (:meth:`Outboxes.take_batches`) and ships
them:

* every ``ship_every`` pages (SEEN_URLS_BEFORE_UPDATE_SCHEDULER) or ``ship_seconds``, whichever
  comes first (:meth:`Outboxes.page_handled` says when);
* as soon as what waits holds ``ship_bytes`` (:meth:`Outboxes.put` says when, even within one
  page): a batch's size, and the memory of every process that carries it (fetcher, broker,
  inbox worker, queue server), stays bounded whatever the pages are like.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from crawler.core.transport.batch import FetcherBatch
from crawler.core.transport.fetch_error_kinds import FetchErrorKinds
from indexer.core.urls import server_of_url

SEEN_URLS_BEFORE_UPDATE_SCHEDULER = 380   # MEMORY_PROFILE (4) x 95
SHIP_SECONDS = 4.0   # ...or after this long, so that discovered links return to the queue soon
# ...or once what waits to go out holds this many bytes (documents' summaries, cached pages and
# index blobs, as base64, and discovered urls; see batch_item_bytes). Sealing and sending a
# batch briefly takes several times its size (JSON text, compressed, base64, the broker
# message): with 4 MiB, a page with thousands of links (an API reference's index) raised a
# fetcher's peak by 30 MiB.
SHIP_BYTES = 2 << 20


def batch_item_bytes(item: dict[str, Any] | list[Any]) -> int:
    """About the bytes one outbox item adds to a batch's JSON text: a wire document's three
    base64 fields, or a discovered url's url, source url and anchor text plus its numbers."""
    if isinstance(item, dict):
        return len(item["s"]) + len(item["c"]) + len(item["x"])
    return len(item[0]) + len(item[3]) + len(item[11]) + 48


@dataclass(slots=True)
class Outbox:
    """What waits for one queue server (the fields of a :class:`FetcherBatch`)."""

    docs: list[dict[str, Any]] = field(default_factory=list)
    discovered: list[list[Any]] = field(default_factory=list)
    robots: list[dict[str, Any]] = field(default_factory=list)
    host_errors: dict[str, int] = field(default_factory=dict)
    fetched: list[list[Any]] = field(default_factory=list)
    deferred: list[list[Any]] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)
    stalls: dict[str, int] = field(default_factory=dict)
    hopeless: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)  # crawl-delayed hosts done with
    counters: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    log: list[list[Any]] = field(default_factory=list)
    refused: list[list[Any]] = field(default_factory=list)
    errors: FetchErrorKinds = field(default_factory=FetchErrorKinds)  # failed pages by kind
    # archive records that could not become pages, by reason (crawler.core.archive.skipped)
    skipped: FetchErrorKinds = field(default_factory=FetchErrorKinds)

    def empty(self) -> bool:
        return not (self.docs or self.discovered or self.robots or self.host_errors
                    or self.fetched or self.deferred or self.stalls or self.counters
                    or self.released
                    or self.log or self.refused or self.errors.kinds or self.skipped.kinds)


class Outboxes:
    """One :class:`Outbox` per queue server, the bytes they hold, and the pages since the last
    shipment. Not thread-safe: the schedule's main thread fills and empties them."""

    def __init__(self, num_servers: int, ship_every: int = SEEN_URLS_BEFORE_UPDATE_SCHEDULER,
                 ship_seconds: float = SHIP_SECONDS, ship_bytes: int = SHIP_BYTES) -> None:
        self.num_servers = num_servers
        self._boxes: dict[int, Outbox] = defaultdict(Outbox)
        self._bytes = 0  # of the documents and urls in the outboxes
        self._ship_every = ship_every
        self._ship_seconds = ship_seconds
        self._ship_bytes = ship_bytes
        self._pages = 0          # pages handled since the last shipment on their account
        self._last_ship = 0.0    # when that was (time.monotonic)

    def server_of(self, url: str) -> int:
        """The queue server that owns ``url``'s host (the rule of the queue server's own
        ``owns``: :func:`indexer.core.urls.server_of_url`)."""
        if self.num_servers == 1:  # every document and url of a one-server crawl (no parse)
            return 0
        return server_of_url(url, self.num_servers)

    def of(self, server: int) -> Outbox:
        return self._boxes[server]

    def put(self, box: list[Any], item: dict[str, Any] | list[Any]) -> bool:
        """Add one document or discovered url to an outbox list; True once the outboxes hold
        ``ship_bytes`` (ship now)."""
        box.append(item)
        self._bytes += batch_item_bytes(item)
        return self._bytes >= self._ship_bytes

    def start(self, now: float) -> None:
        """A schedule starts: its pages count from ``now`` (time.monotonic)."""
        self._pages, self._last_ship = 0, now

    def page_handled(self, now: float) -> bool:
        """One more page handled at ``now``: is a shipment due (pages, bytes or seconds)?
        The caller ships, then calls :meth:`shipped`."""
        self._pages += 1
        return (self._pages >= self._ship_every or self._bytes >= self._ship_bytes
                or now - self._last_ship >= self._ship_seconds)

    def shipped(self, now: float) -> None:
        self._pages, self._last_ship = 0, now

    def take_batches(self, crawl: int, schedule_id: str, origin_server: int,
                     done: bool, partial: bool = False) -> list[tuple[int, FetcherBatch]]:
        """Every non-empty outbox as a batch, and empty them. With ``done``, the schedule's own
        queue server gets a batch even if empty, marked done, and it comes last: it
        acknowledges the schedule, so everything else the schedule found is already on its
        way when that happens. ``partial``: the batches end in the middle of a page (the
        rest of it follows in the next ones)."""
        if done:
            self._boxes.setdefault(origin_server, Outbox())
        batches = []
        for server in sorted(self._boxes, key=lambda n: (n == origin_server, n)):
            box = self._boxes[server]
            final = done and server == origin_server
            if box.empty() and not final:
                continue
            batches.append((server, FetcherBatch(
                crawl=crawl, server=server,
                schedule=schedule_id if server == origin_server else None, done=final,
                partial=partial and not final,
                docs=tuple(box.docs), discovered=tuple(box.discovered),
                robots=tuple(box.robots), host_errors=box.host_errors,
                fetched=tuple(box.fetched), deferred=tuple(box.deferred),
                abandoned=tuple(box.abandoned), stalls=box.stalls,
                hopeless=tuple(box.hopeless), released=tuple(box.released),
                counters=dict(box.counters),
                log=tuple(box.log), refused=tuple(box.refused),
                errors=box.errors.to_json(), skipped=box.skipped.to_json())))
        self._boxes.clear()
        self._bytes = 0
        return batches
