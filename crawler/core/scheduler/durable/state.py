"""The crawl queue's checkpoint state file and ETag table: explicit, versioned JSON.

Layer: ``crawler.core.scheduler``. Both files are checksummed blobs (:mod:`.storage`):
``QueueState/state.<g>.bin`` (magic ``YQSTATE1``) and ``EtagExpires/etag.<g>.bin`` (magic
``YQETAG01``). Format version 2 (this module) holds UTF-8 JSON; floats are written with
``repr`` precision, so a state reads back exactly. The state object is::

    {"token": str, "config": {SchedulerConfig field: value},
     "hosts": {origin: [rules, robots_queued, robots_attempts, error_delay, busy
                        (, min_delay, excluded: the operator's override, when set)]},
     "host_lanes": {"robots": lane, "wait": {origin: lane}, "delayed": {origin: lane}},
     "order": tiered: {"tiers": {tier: lane}, "next_tier": int, "unparked": lane (states
                       written before it have none)}
              OPIC:   {"pool": {"urls": [...], "depth": i4, "cash": f8, "history": f8,
                                "state": u1}, "policies": [[url hash, code, depth]]},
     "outstanding": [{"schedule": {...}, "delayed_hosts": [...], "robots_origins": [...],
                      "requester": str|null}],
     "requesters": {fetcher: schedule id}, "counters": {name: int}, "seq": int,
     "bloom_epoch": float|null,
     "needy": {"heap": [[-priority, seq, line]], "seq": int, "queries": [[text, f, r]]},
     "revisits": {"lane": lane, "head": line|null, "retired": u1 column (24-byte doc_ids),
                  "removed": u8 column (url hashes), "version": int, "copies": histogram,
                  "outcomes": {outcome: int}, "released": int},
     "quotas": {"hour": int, "used": {quota rule: urls}}}  (only while a quota was used)

``lane`` is ``[rel_dir, [[file, committed length]], read_offset, read_skip, pending,
next_seq]`` (:class:`..lanes.LaneState`); ``rules`` is null (not in yet), ``"allow"``,
``"disallow"`` or ``{"robots_txt": text, "agent": user agent}``; numeric columns (``i4``...)
are ``{"dtype": numpy dtype, "base64": little-endian bytes}``. The ETag table is the visit
table of :mod:`..revisits`: ``[[url hash, etag|null, expires|null, last_modified|null,
doc_id hex|null, partition, copy fetched at|null, visited at, outcome]]``; tables written
before visits were kept have rows ``[url hash, etag|null, expires|null]``, and states written
before them no ``"revisits"`` (both still read).

Format version 1 was a pickle of the queue's classes; :mod:`.legacy_state` reads it so a crawl
checkpointed before version 2 still resumes.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from array import array
from dataclasses import dataclass
from typing import Any

import numpy as np

from crawler.core.definition.crawl import CrawlOrder, RobotsBehaviour
from crawler.core.definition.siterules import SiteRule, SiteRules
from crawler.core.scheduler.config import SchedulerConfig
from crawler.core.scheduler.errors import CorruptQueueError
from crawler.core.scheduler.lanes import LaneState
from crawler.core.scheduler.needy_lane import HeapEntry, NeedyRow
from crawler.core.scheduler.outstanding import Outstanding
from crawler.core.scheduler.politeness import HostState
from crawler.core.scheduler.revisits import UrlVisit, Validators
from crawler.core.scheduler.robots import ALLOW_ALL, DISALLOW_ALL, RobotsRules, RobotsTxt
from crawler.core.scheduler.values import Schedule, ScheduleEntry

STATE_MAGIC = b"YQSTATE1"
ETAG_MAGIC = b"YQETAG01"
FORMAT = 2

@dataclass(slots=True)
class QueueSnapshot:
    """Everything a checkpoint records besides the Bloom filter, the CLD table, the ETag
    table and the url files themselves."""

    token: str
    config: SchedulerConfig
    hosts: dict[str, HostState]
    host_lanes: dict[str, Any]
    order: dict[str, Any]
    outstanding: list[Outstanding]
    requesters: dict[str, str]
    counters: dict[str, int]
    seq: int
    bloom_epoch: float | None
    needy_heap: list[HeapEntry]
    needy_seq: int
    needy_queries: tuple[NeedyRow, ...]
    revisits: dict[str, Any] | None = None   # see .revisits.Revisits.checkpoint
    quotas: dict[str, Any] | None = None     # see ..builder.HourlyQuotas.to_json


# -- values -------------------------------------------------------------------------------

def encode_rules(rules: RobotsRules | None) -> Any:
    if rules is None:
        return None
    if rules is ALLOW_ALL:
        return "allow"
    if rules is DISALLOW_ALL:
        return "disallow"
    if isinstance(rules, RobotsTxt):
        return {"robots_txt": rules.text, "agent": rules.user_agent}
    raise TypeError(f"the queue state keeps robots.txt text, ALLOW_ALL or DISALLOW_ALL, "
                    f"not {type(rules).__name__}")


def _decode_rules(data: Any) -> RobotsRules | None:
    if data is None:
        return None
    if data == "allow":
        return ALLOW_ALL
    if data == "disallow":
        return DISALLOW_ALL
    return RobotsTxt(data["robots_txt"], data["agent"])


def _encode_lane(state: LaneState) -> list[Any]:
    return [state.rel_dir, [list(f) for f in state.files], state.read_offset, state.read_skip,
            state.pending, state.next_seq]


def _decode_lane(data: list[Any]) -> LaneState:
    rel_dir, files, read_offset, read_skip, pending, next_seq = data
    return LaneState(rel_dir, tuple((str(rel), int(n)) for rel, n in files), int(read_offset),
                     int(read_skip), int(pending), int(next_seq))


def _encode_column(values: np.ndarray | array) -> dict[str, str]:
    column = np.asarray(values)
    column = column.astype(column.dtype.newbyteorder("<"), copy=False)
    return {"dtype": column.dtype.str, "base64": base64.b64encode(column.tobytes()).decode()}


def _decode_column(data: dict[str, str]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(data["base64"]), dtype=np.dtype(data["dtype"]))


def _encode_config(cfg: SchedulerConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if isinstance(value, SiteRules):
            value = {"allowed": [[r.kind, r.value, r.source] for r in value.allowed],
                     "disallowed": [[r.kind, r.value, r.source] for r in value.disallowed],
                     "restrict": value.restrict, "seed_hosts": sorted(value.seed_hosts),
                     "quotas": [[r.kind, r.value, r.source, n] for r, n in value.quotas]}
        elif isinstance(value, CrawlOrder | RobotsBehaviour):
            value = value.value
        out[f.name] = value
    return out


def decode_config(data: dict[str, Any]) -> SchedulerConfig:
    """A configuration from its recorded fields (fields it does not record keep defaults)."""
    known = {f.name for f in dataclasses.fields(SchedulerConfig)}
    values = {name: value for name, value in data.items() if name in known}
    rules = values.get("site_rules")
    if isinstance(rules, dict):
        values["site_rules"] = SiteRules(
            tuple(SiteRule(*r) for r in rules["allowed"]),
            tuple(SiteRule(*r) for r in rules["disallowed"]), bool(rules["restrict"]),
            frozenset(rules["seed_hosts"]),
            tuple((SiteRule(*q[:3]), int(q[3])) for q in rules.get("quotas", ())))
    if "order" in values:
        values["order"] = CrawlOrder(values["order"])
    if "robots" in values:
        values["robots"] = RobotsBehaviour(values["robots"])
    if "seed_policies" in values:
        values["seed_policies"] = tuple(tuple(pair) for pair in values["seed_policies"])
    return SchedulerConfig(**values)


def _encode_schedule(schedule: Schedule) -> dict[str, Any]:
    return {"id": schedule.id, "issued_at": schedule.issued_at, "deadline": schedule.deadline,
            "round_size": schedule.round_size, "reissue": schedule.reissue,
            "entries": [[e.url, e.depth, e.weight, e.tier, e.crawl_delay, e.etag, e.slot,
                         e.policy, e.policy_depth, e.last_modified, e.text_hash]
                        for e in schedule.entries]}


def _decode_schedule(data: dict[str, Any]) -> Schedule:
    entries = tuple(ScheduleEntry(*row) for row in data["entries"])
    return Schedule(data["id"], entries, data["issued_at"], data["deadline"],
                    data["round_size"], data["reissue"])


def _encode_order(order: dict[str, Any]) -> dict[str, Any]:
    out = dict(order)
    if "tiers" in order:
        out["tiers"] = {str(tier): _encode_lane(s) for tier, s in order["tiers"].items()}
    if "unparked" in order:
        out["unparked"] = _encode_lane(order["unparked"])
    if "pool" in order:
        pool = order["pool"]
        out["pool"] = {"urls": list(pool["urls"]),
                       **{name: _encode_column(pool[name])
                          for name in ("depth", "cash", "history", "state")}}
        out["policies"] = [[h, code, depth] for h, (code, depth) in order["policies"].items()]
    return out


def _decode_order(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    if "tiers" in data:
        out["tiers"] = {int(tier): _decode_lane(s) for tier, s in data["tiers"].items()}
    if "unparked" in data:
        out["unparked"] = _decode_lane(data["unparked"])
    if "pool" in data:
        pool = data["pool"]
        out["pool"] = {"urls": pool["urls"],
                       **{name: _decode_column(pool[name])
                          for name in ("depth", "cash", "history", "state")}}
        out["policies"] = {int(h): (code, int(depth)) for h, code, depth in data["policies"]}
    return out


def _encode_host(h: HostState) -> list[Any]:
    row = [encode_rules(h.rules), h.robots_queued, h.robots_attempts, h.error_delay, h.busy]
    if h.min_delay or h.excluded:  # the operator's override, only when there is one
        row += [h.min_delay, h.excluded]
    return row


def _decode_host(row: list[Any]) -> HostState:
    """A host's row: five items, or seven with the operator's override (states written
    before overrides existed have five)."""
    rules, queued, attempts, error_delay, busy = row[:5]
    min_delay, excluded = (float(row[5]), bool(row[6])) if len(row) >= 7 else (0.0, False)
    return HostState(_decode_rules(rules), queued, attempts, error_delay, busy, min_delay,
                     excluded)


# -- the state file -----------------------------------------------------------------------

def encode_state(snap: QueueSnapshot) -> bytes:
    lanes = snap.host_lanes
    data = {
        "token": snap.token,
        "config": _encode_config(snap.config),
        "hosts": {origin: _encode_host(h) for origin, h in snap.hosts.items()},
        "host_lanes": {"robots": _encode_lane(lanes["robots"]),
                       "wait": {o: _encode_lane(s) for o, s in lanes["wait"].items()},
                       "delayed": {o: _encode_lane(s) for o, s in lanes["delayed"].items()}},
        "order": _encode_order(snap.order),
        "outstanding": [{"schedule": _encode_schedule(out.schedule),
                         "delayed_hosts": list(out.delayed_hosts),
                         "robots_origins": list(out.robots_origins),
                         "requester": out.requester} for out in snap.outstanding],
        "requesters": snap.requesters,
        "counters": snap.counters,
        "seq": snap.seq,
        "bloom_epoch": snap.bloom_epoch,
        "needy": {"heap": [list(entry) for entry in snap.needy_heap], "seq": snap.needy_seq,
                  "queries": [list(row) for row in snap.needy_queries]},
    }
    if snap.revisits is not None:
        data["revisits"] = _encode_revisits(snap.revisits)
    if snap.quotas and snap.quotas.get("used"):
        data["quotas"] = snap.quotas
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def decode_state(payload: bytes, where: str) -> QueueSnapshot:
    try:
        data = json.loads(payload)
        lanes = data["host_lanes"]
        needy = data["needy"]
        return QueueSnapshot(
            token=data["token"],
            config=decode_config(data["config"]),
            hosts={origin: _decode_host(row) for origin, row in data["hosts"].items()},
            host_lanes={"robots": _decode_lane(lanes["robots"]),
                        "wait": {o: _decode_lane(s) for o, s in lanes["wait"].items()},
                        "delayed": {o: _decode_lane(s) for o, s in lanes["delayed"].items()}},
            order=_decode_order(data["order"]),
            outstanding=[Outstanding(_decode_schedule(o["schedule"]),
                                     tuple(o["delayed_hosts"]), tuple(o["robots_origins"]),
                                     o["requester"]) for o in data["outstanding"]],
            requesters=dict(data["requesters"]),
            counters={k: int(v) for k, v in data["counters"].items()},
            seq=int(data["seq"]),
            bloom_epoch=data["bloom_epoch"],
            needy_heap=[(float(p), int(s), str(line)) for p, s, line in needy["heap"]],
            needy_seq=int(needy["seq"]),
            needy_queries=tuple((str(t), float(f), float(r)) for t, f, r in needy["queries"]),
            revisits=_decode_revisits(data.get("revisits")),
            quotas=data.get("quotas"),
        )
    except (ValueError, KeyError, TypeError) as exc:  # checksummed, yet not a version-2 state
        raise CorruptQueueError(f"state does not load: {exc!r}", where) from exc


def _encode_revisits(state: dict[str, Any]) -> dict[str, Any]:
    retired = np.frombuffer(b"".join(state["retired"]), dtype=np.uint8)
    return {**state, "lane": _encode_lane(state["lane"]),
            "retired": _encode_column(retired),
            "removed": _encode_column(np.array(state["removed"], dtype=np.uint64))}


def _decode_revisits(data: dict[str, Any] | None) -> dict[str, Any] | None:
    if data is None:
        return None
    retired = _decode_column(data["retired"]).tobytes()
    return {**data, "lane": _decode_lane(data["lane"]),
            "retired": [retired[i:i + 24] for i in range(0, len(retired), 24)],
            "removed": [int(h) for h in _decode_column(data["removed"]).tolist()]}


def encode_validators(table: Validators) -> bytes:
    return json.dumps([visit.to_row(h) for h, visit in table.items()],
                      separators=(",", ":"), ensure_ascii=False).encode()


def decode_validators(payload: bytes, where: str) -> Validators:
    try:
        return dict(UrlVisit.from_row(row) for row in json.loads(payload))
    except (ValueError, TypeError) as exc:  # checksummed, yet not a version-2 table
        raise CorruptQueueError(f"ETag table does not load: {exc!r}", where) from exc
