"""A queue server's heartbeat counters: what it reports, per crawl, every few seconds, and the
one way to read them back (the crawl's counters and its end, the admin's status, host and
needy pages, the Machines page, ``/metrics``).

Layer: ``crawler.core.queue_server`` (pure Python). The queue-server process
(``crawler.machines.queue_server``) writes :func:`heartbeat_counters` into its
``QueueServer.counters`` row; every reader goes through :func:`crawl_counters`,
:func:`reported_crawls`, :func:`saved_crawls` or :func:`server_totals`. The form::

    {"crawls": {"<crawl id>": {<QueueServerCore.stats()>, "idle": bool}, ...},
     "saved": [<crawl ids whose queues this queue server saved after a stop>],
     "disk": {<crawler.core.queue_server.disk_space counters>}}

A queue server works on every active crawl at once (each on its own channel, issue 37), so
each open crawl has its own entry. A report of the earlier one-crawl form
(``{"crawl": id, <stats>, "idle": bool, "saved": id, "disk": ...}``, a queue server of the
previous version while the machines are upgraded one by one) reads the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def heartbeat_counters(crawls: Mapping[int, Mapping[str, Any]], saved: Iterable[int],
                       disk: Mapping[str, Any]) -> dict[str, Any]:
    """The counters of one heartbeat: ``crawls`` (crawl id -> its counters on this queue
    server), the crawls whose queues it ``saved`` after a stop, and its ``disk`` state."""
    return {"crawls": {str(crawl_id): dict(values) for crawl_id, values in crawls.items()},
            "saved": sorted(int(c) for c in saved), "disk": dict(disk)}


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def crawl_counters(counters: Mapping[str, Any] | None, crawl_id: int) -> dict[str, Any] | None:
    """Crawl ``crawl_id``'s counters in one heartbeat, or None when this queue server does
    not work on it."""
    counters = counters or {}
    crawls = counters.get("crawls")
    if isinstance(crawls, Mapping):
        found = crawls.get(str(crawl_id))
        return dict(found) if isinstance(found, Mapping) else None
    if counters.get("crawl") is not None and _int(counters.get("crawl")) == crawl_id:
        return {k: v for k, v in counters.items() if k not in ("crawl", "saved", "disk")}
    return None


def reported_crawls(counters: Mapping[str, Any] | None) -> list[int]:
    """The crawls one heartbeat reports on (open, or waiting to be opened), ascending."""
    counters = counters or {}
    crawls = counters.get("crawls")
    if isinstance(crawls, Mapping):
        return sorted(c for c in (_int(k) for k in crawls) if c is not None)
    single = _int(counters.get("crawl"))
    return [] if single is None else [single]


def saved_crawls(counters: Mapping[str, Any] | None) -> set[int]:
    """The stopping crawls whose queues this queue server has saved."""
    saved = (counters or {}).get("saved")
    if isinstance(saved, list):
        return {c for c in (_int(s) for s in saved) if c is not None}
    single = _int(saved)
    return set() if single is None else {single}


def server_totals(counters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The queue server's figures over every crawl it works on (``/metrics`` exports them by
    server): numbers summed, ``*_by_kind`` and ``tiers`` mappings summed key by key; the
    figures not of a crawl (``disk``) as they are."""
    counters = counters or {}
    if not isinstance(counters.get("crawls"), Mapping):
        return dict(counters)
    out: dict[str, Any] = {k: v for k, v in counters.items() if k not in ("crawls", "saved")}
    for values in counters["crawls"].values():
        for key, value in (values or {}).items():
            if isinstance(value, bool):
                continue
            if isinstance(value, int | float):
                out[key] = out.get(key, 0) + value
            elif isinstance(value, Mapping) and (key.endswith("_by_kind") or key == "tiers"):
                merged = out.setdefault(key, {})
                for kind, count in value.items():
                    if isinstance(count, int | float) and not isinstance(count, bool):
                        merged[kind] = merged.get(kind, 0) + count
    return out
