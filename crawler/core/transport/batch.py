"""The batch a fetcher ships to one queue server: one frozen dataclass, its JSON form built and
parsed here.

Layer: ``crawler.core``. The fetcher (:mod:`crawler.core.fetcher.outboxes`) builds a
:class:`FetcherBatch` per queue server; the glue ships :meth:`FetcherBatch.to_wire` in a signed
envelope (``crawler.core.transport.shipping.seal``); the queue server
(``crawler.core.queue_server.server``) and its inbox task read it back with
:meth:`FetcherBatch.from_wire`. The items inside keep their
own JSON forms, encoded and decoded by :mod:`crawler.core.transport.wire` (documents, discovered
urls, deferred urls). The JSON form::

    {"crawl": <timestamp>, "server": n, "schedule": <id or null>, "done": bool,
     "partial": bool,
     "docs": [document, ...], "discovered": [url tuple, ...],
     "deferred": [[url, depth, weight, tier, policy, policy depth], ...],
     "abandoned": [url, ...],
     "stalls": {origin: count}, "hopeless": [origin, ...], "released": [origin, ...],
     "robots": [{"origin", "status", "body", "error", "message"}],
     "host_errors": {origin: count},
     "fetched": [visit, ...], "counters": {name: int},
     "log": [[url, status, bytes, fetched at, error kind], ...],
     "refused": [[url, reason, detail], ...],
     "errors": {kind: {"count": n, "url": example, "message": its error}},
     "skipped": {reason: {"count": n, "url": example, "message": why}}}

``done`` is set on the last batch a fetcher sends to the schedule's own queue server: that
queue server then acknowledges the schedule. ``partial`` is set on the batches a fetcher ships
in the middle of a page (a page whose documents pass the batch bound by themselves): the rest
of the page follows in the next batches of the schedule, and the schedule's own queue server
applies the parts together (:mod:`crawler.core.queue_server.page_parts`). Their keys come first, in
this order, so that
a queue server reads them from the head of a batch's JSON text (:func:`batch_head`). ``deferred`` are urls of the schedule the fetcher
did not fetch because their host stalled (they go back into the queue), ``stalls`` counts each
such host's stalled downloads, ``hopeless`` names those none of whose downloads came in time
(the queue server drops a host that was hopeless in several schedules; a batch without
``hopeless``, from an older fetcher, counts every stalled host). ``released`` names the
crawl-delayed hosts of the schedule whose urls the fetcher has all fetched and sent (in this
batch or before): the queue server frees them for the next schedule before this one ends. ``fetched`` has one row per
page download, :class:`crawler.core.transport.visits.Visit` in its wire form (what the visit found,
the page's validators and the document made of it; older fetchers sent ``[url, etag,
expires]``). ``abandoned`` names the
deferred urls that were requested and given up on (still downloading at the schedule's end):
the queue server requeues a url at most twice for that, so a page that never finishes is
requested at most three times in a crawl. ``log`` has one row per download the fetcher
made of the schedule's urls (robots.txt included): its HTTP status (0 without an answer), the
bytes downloaded, when (a Unix time) and the fetch error's kind ("" when none); ``refused``
names urls the fetcher would not fetch or index (the egress allow-list refused their host's
addresses, a robots meta tag or header said noindex), with a reason and a short detail: both
feed the admin's url and host pages (``crawler.core.queue_server.activity``). A ``robots`` answer
that failed without an HTTP answer (status 0) names the fetch error's ``error`` kind and
``message``. ``errors`` are the failed page downloads by kind, with an example of each
(:mod:`.fetch_error_kinds`); ``skipped`` the records of an archive crawl that could not become
pages, by reason (:mod:`crawler.core.archive.skipped`). Every key but
``crawl`` may be missing when read: it is then empty (``server``: None, meaning the reader's
own).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crawler.core.transport.fetch_error_kinds import FetchErrorKinds
from crawler.core.transport.wire import WireError

_HEAD = re.compile(rb'"schedule"\s*:\s*(null|"(?:[^"\\]|\\.)*")\s*,\s*"done"\s*:\s*(true|false)'
                   rb'(?:\s*,\s*"partial"\s*:\s*(true|false))?')
HEAD_BYTES = 512
_LISTS = ("docs", "discovered", "robots", "fetched", "deferred", "abandoned", "log",
          "refused")
_COUNTS = ("host_errors", "stalls", "counters")


@dataclass(frozen=True, slots=True)
class FetcherBatch:
    """What one fetcher sends one queue server at a time (see the module docstring). Items
    are in their JSON forms (:mod:`crawler.core.transport.wire`), as the fetcher made them."""

    crawl: int
    server: int | None
    schedule: str | None = None
    done: bool = False
    partial: bool = False
    docs: tuple[dict[str, Any], ...] = ()
    discovered: tuple[list[Any], ...] = ()
    robots: tuple[dict[str, Any], ...] = ()
    host_errors: Mapping[str, int] = field(default_factory=dict)
    fetched: tuple[list[Any], ...] = ()
    deferred: tuple[list[Any], ...] = ()
    abandoned: tuple[str, ...] = ()
    stalls: Mapping[str, int] = field(default_factory=dict)
    hopeless: tuple[str, ...] | None = ()
    released: tuple[str, ...] = ()
    counters: Mapping[str, int] = field(default_factory=dict)
    log: tuple[list[Any], ...] = ()
    refused: tuple[list[Any], ...] = ()
    errors: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    skipped: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """The JSON form. Long lists stay lists (the envelope seals them a slice at a time)."""
        return {
            "crawl": self.crawl, "server": self.server, "schedule": self.schedule,
            "done": self.done, "partial": self.partial, "docs": list(self.docs),
            "discovered": list(self.discovered),
            "robots": list(self.robots), "host_errors": dict(self.host_errors),
            "fetched": list(self.fetched), "deferred": list(self.deferred),
            "abandoned": list(self.abandoned),
            "stalls": dict(self.stalls),
            "hopeless": None if self.hopeless is None else list(self.hopeless),
            "released": list(self.released),
            "counters": dict(self.counters),
            "log": list(self.log), "refused": list(self.refused),
            "errors": {kind: dict(row) for kind, row in self.errors.items()},
            "skipped": {reason: dict(row) for reason, row in self.skipped.items()},
        }

    @classmethod
    def from_wire(cls, data: Any) -> FetcherBatch:
        """Check a batch's shape and scalar fields; raise :class:`WireError`. Its items are
        checked when they are decoded (:mod:`crawler.core.transport.wire`)."""
        if not isinstance(data, dict):
            raise WireError(f"batch: expected a dict, got {type(data).__name__}")
        try:
            lists = {key: _list(data.get(key), key) for key in _LISTS}
            counts = {key: _counts(data.get(key), key) for key in _COUNTS}
            hopeless = data.get("hopeless")
            server, schedule = data.get("server"), data.get("schedule")
            errors, skipped = data.get("errors") or {}, data.get("skipped") or {}
            if not isinstance(errors, dict) or not isinstance(skipped, dict):
                raise WireError("batch errors and skipped records: expected dicts")
            return cls(
                crawl=int(data["crawl"]),
                server=None if server is None else int(server),
                schedule=None if schedule is None else str(schedule),
                done=bool(data.get("done")), partial=bool(data.get("partial")),
                hopeless=None if hopeless is None else tuple(
                    str(o) for o in _list(hopeless, "hopeless")),
                released=tuple(str(o) for o in _list(data.get("released"), "released")),
                errors=FetchErrorKinds.from_json(errors).to_json(),
                skipped=FetchErrorKinds.from_json(skipped).to_json(),
                **lists, **counts)
        except WireError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise WireError(f"bad batch: {exc!r}") from None


def _list(value: Any, name: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise WireError(f"batch {name}: expected a list, got {type(value).__name__}")
    return tuple(value)


def _counts(value: Any, name: str) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise WireError(f"batch {name}: expected a dict, got {type(value).__name__}")
    return {str(k): int(v) for k, v in value.items()}


def batch_head(payload: bytes) -> tuple[str | None, bool, bool]:
    """(``schedule``, ``done``, ``partial``) of a batch's JSON text, read from its head when
    they are there (see the module), else from the whole text parsed; a text that is not a
    batch gives (None, False, False) (it is refused when applied)."""
    match = _HEAD.search(payload[:HEAD_BYTES])
    if match is not None:
        schedule = None if match.group(1) == b"null" else json.loads(match.group(1))
        return schedule, match.group(2) == b"true", match.group(3) == b"true"
    try:
        data = json.loads(payload)
        schedule = data.get("schedule")
        return (schedule if isinstance(schedule, str) else None, bool(data.get("done")),
                bool(data.get("partial")))
    except (ValueError, AttributeError):
        return None, False, False
