"""LEGACY READER: the crawl queue's state and ETag files of format version 1 (pickles).

Layer: ``crawler.core.scheduler``. Until version 2 (:mod:`.state`) a checkpoint pickled the
queue's objects, so the file named the classes of the code that wrote it. This module is the one
place that still reads such files, so that a crawl checkpointed by that code resumes; the queue
writes version 2 at the checkpoint that follows (opening a queue always checkpoints). Classes
that have moved since are mapped by :data:`_MOVED`, and modules that have moved since (whole,
their classes keeping their names) by :data:`_MOVED_MODULES`; nothing here is used for writing.
Tested against queues written by the version-1 code (``tests/fixtures/scheduler``).
"""

from __future__ import annotations

import dataclasses
import io
import pickle
from typing import Any

from crawler.core.definition.siterules import SiteRules
from crawler.core.scheduler.config import SchedulerConfig
from crawler.core.scheduler.durable.state import QueueSnapshot, Validators
from crawler.core.scheduler.errors import CorruptQueueError
from crawler.core.scheduler.outstanding import Outstanding
from crawler.core.scheduler.politeness import HostState
from crawler.core.scheduler.revisits import UrlVisit
from crawler.core.scheduler.values import ScheduleEntry

LEGACY_PICKLE_FORMAT = 1

# (module, name) in a version-1 pickle -> the class that now reads that state
_MOVED: dict[tuple[str, str], type] = {
    ("crawler.core.scheduler.queue", "_Host"): HostState,
    ("crawler.core.scheduler.queue", "_Outstanding"): Outstanding,
}


# module named in a version-1 pickle -> the module that now holds its classes (issue 32 moved
# the crawl definition into crawler.core.definition; version-1 files still name the old homes)
_MOVED_MODULES: dict[str, str] = {
    "crawler.core.crawl": "crawler.core.definition.crawl",
    "crawler.core.siterules": "crawler.core.definition.siterules",
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        moved = _MOVED.get((module, name))
        if moved is not None:
            return moved
        return super().find_class(_MOVED_MODULES.get(module, module), name)


def _load(payload: bytes, where: str) -> Any:
    try:
        return _Unpickler(io.BytesIO(payload)).load()
    except Exception as exc:  # any failure to unpickle a checksummed payload is corruption
        raise CorruptQueueError(f"version-1 state does not load: {exc!r}", where) from exc


def _config(old: Any) -> SchedulerConfig:
    """A current configuration from a pickled one (fields it lacks keep their defaults)."""
    values = {f.name: getattr(old, f.name) for f in dataclasses.fields(SchedulerConfig)
              if hasattr(old, f.name)}
    rules = values.get("site_rules")
    if rules is not None:  # unpickled without the fields added since (quotas)
        values["site_rules"] = SiteRules(rules.allowed, rules.disallowed, rules.restrict,
                                         rules.seed_hosts)
    return SchedulerConfig(**values)


def read_state_v1(payload: bytes, where: str) -> QueueSnapshot:
    """A version-1 state as a snapshot: its lanes dict held the tier lanes beside the host
    lanes, the round-robin position was ``rr``, OPIC's pool and policies were top-level."""
    state = _load(payload, where)
    lanes = state["lanes"]
    if state["pool"]:
        order: dict[str, Any] = {"pool": state["pool"],
                                 "policies": dict(state.get("opic_policy", {}))}
    else:
        order = {"tiers": dict(lanes["tiers"]), "next_tier": int(state["rr"])}
    outstanding = state["outstanding"]
    return QueueSnapshot(
        token=state["token"],
        config=_config(state["config"]),
        hosts={origin: _host(h) for origin, h in state["hosts"].items()},
        host_lanes={"robots": lanes["robots"], "wait": lanes["wait"],
                    "delayed": lanes["delayed"]},
        order=order,
        outstanding=[_outstanding(out) for out in outstanding.values()],
        requesters=dict(state["requesters"]),
        counters=dict(state["counters"]),
        seq=int(state["seq"]),
        bloom_epoch=state["bloom_epoch"],
        needy_heap=list(state.get("needy_heap", [])),
        needy_seq=int(state.get("needy_seq", 0)),
        needy_queries=tuple(state.get("needy_queries", ())),
    )


def _outstanding(out: Outstanding) -> Outstanding:
    """A version-1 outstanding schedule whose entries were unpickled without the fields
    added since (the validators of a recrawl): made again with their defaults."""
    entries = tuple(
        ScheduleEntry(**{f.name: getattr(e, f.name, f.default)
                         for f in dataclasses.fields(ScheduleEntry)})
        for e in out.schedule.entries)
    out.schedule = dataclasses.replace(out.schedule, entries=entries)
    return out


def _host(old: HostState) -> HostState:
    """A version-1 host, unpickled without the fields added since (the operator's
    override): made again with their defaults."""
    return HostState(old.rules, old.robots_queued, old.robots_attempts, old.error_delay,
                     old.busy)


def read_validators_v1(payload: bytes, where: str) -> Validators:
    """The version-1 table, url hash -> (ETag, Expires), as visits of unknown outcome."""
    return {h: UrlVisit(etag, expires) for h, (etag, expires) in _load(payload, where).items()}
