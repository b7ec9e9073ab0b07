"""What a queue server keeps across restarts besides its queue and index: its counters and its
tallies by host, by url, by failure kind. One frozen value, its JSON form built and parsed here.

Layer: ``crawler.core.queue_server``. :class:`~crawler.core.queue_server.server.QueueServerCore`
holds one :class:`QueueServerState` whose containers the batches it applies update in place; it
saves the state's JSON (``to_json``) in its work directory's state file after the batches it
applied, and reads it back at start (``from_json``). Before applying a batch it takes a
:meth:`QueueServerState.copy`, and puts that copy back when the batch failed half-way (a full
disk), so the counters are as before that batch. The fields never change identity: only the
queue server's whole state is swapped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crawler.core.archive.skipped import SkippedRecords
from crawler.core.queue_server.robots_failures import RobotsFailures
from crawler.core.transport.fetch_error_kinds import FetchErrorKinds

# the queue server's own counters (the crawl queue's figures are added to them in its stats)
COUNTERS = ("pages_fetched", "fetch_errors", "bytes_downloaded", "documents_indexed",
            "batches", "bad_batches", "deferred_urls", "dropped_host_urls", "abandoned_urls",
            "near_duplicate_pages", "near_duplicate_links_skipped",
            "near_duplicate_fetches_saved")
# the error hosts the state file keeps: the most frequent ones
SAVED_ERROR_HOSTS = 1000


@dataclass(frozen=True, slots=True)
class QueueServerState:
    """A queue server's counters and tallies (see the module)."""

    counters: dict[str, int]            # COUNTERS -> value
    error_hosts: dict[str, int]         # origin -> fetch errors, for the dashboard
    host_stalls: dict[str, int]         # origin -> schedules it stalled
    dropped_hosts: dict[str, str]       # origin -> why it was dropped
    page_tries: dict[str, int]          # url -> times requested and abandoned
    robots_failures: RobotsFailures     # robots.txt answers, failures by kind
    fetch_errors: FetchErrorKinds       # failed page downloads by kind, with examples
    skipped: SkippedRecords             # archive records the fetchers skipped, by reason

    @classmethod
    def empty(cls) -> QueueServerState:
        """The state of a queue server that has applied nothing."""
        return cls(dict.fromkeys(COUNTERS, 0), {}, {}, {}, {}, RobotsFailures(),
                   FetchErrorKinds(), SkippedRecords())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QueueServerState:
        """The state a state file holds (keys it lacks: as in :meth:`empty`)."""
        return cls(
            {key: int(data.get(key, 0)) for key in COUNTERS},
            {str(k): int(v) for k, v in data.get("error_hosts", {}).items()},
            {str(k): int(v) for k, v in data.get("host_stalls", {}).items()},
            {str(k): str(v) for k, v in data.get("dropped_hosts", {}).items()},
            {str(k): int(v) for k, v in data.get("page_tries", {}).items()},
            RobotsFailures.from_json(data.get("robots_failures")),
            FetchErrorKinds.from_json(data.get("fetch_error_kinds")),
            SkippedRecords.from_json(data.get("archive_skipped")))

    def to_json(self) -> dict[str, Any]:
        """The state file's JSON object (the error hosts: the most frequent ones only)."""
        top = dict(sorted(self.error_hosts.items(), key=lambda kv: -kv[1])[:SAVED_ERROR_HOSTS])
        return {**self.counters, "error_hosts": top, "host_stalls": self.host_stalls,
                "dropped_hosts": self.dropped_hosts, "page_tries": self.page_tries,
                "robots_failures": self.robots_failures.to_json(),
                "fetch_error_kinds": self.fetch_errors.to_json(),
                "archive_skipped": self.skipped.to_json()}

    def copy(self) -> QueueServerState:
        """An independent copy, to put back if what follows fails half-way."""
        return QueueServerState(
            dict(self.counters), dict(self.error_hosts), dict(self.host_stalls),
            dict(self.dropped_hosts), dict(self.page_tries),
            RobotsFailures.from_json(self.robots_failures.to_json()),
            FetchErrorKinds.from_json(self.fetch_errors.to_json()),
            SkippedRecords.from_json(self.skipped.to_json()))
