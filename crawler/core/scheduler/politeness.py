"""Per-host politeness of the crawl queue: each origin's robots rules, error delay and
outstanding schedule, and the per-host url files that wait on them.

Layer: ``crawler.core.scheduler``. Folders (url files as in :mod:`.lanes`, records as in
:mod:`.record`)::

    UrlQueue/RobotsTxt/                  robots.txt urls, scheduled before anything else
    WaitRobotUrl/<host hash>/            urls of a host whose robots.txt is not in yet
    CrawlDelayedHosts/<host hash>/       urls parked until their crawl-delayed host's
                                         outstanding schedule is acknowledged

A ``<host hash>`` is :func:`.ordering.formulas.host_hash` of the origin ``scheme://host[:port]``.
Invariants the queue keeps with this: a url enters UrlQueue only after its host's rules allowed
it (unless robots are ignored); a crawl-delayed host has at most one outstanding schedule
(:attr:`HostState.busy`), so the one fetcher holding it paces every request to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crawler.core.definition.crawl import RobotsBehaviour
from crawler.core.scheduler.lanes import Lane, LaneContext, LaneState
from crawler.core.scheduler.ordering.formulas import host_hash
from crawler.core.scheduler.record import FLAG_NON_HTML, QueuedUrl
from crawler.core.scheduler.robots import ALLOW_ALL, RobotsRules

ROBOTS_LANE = "UrlQueue/RobotsTxt"
WAIT_DIR = "WaitRobotUrl"
DELAYED_DIR = "CrawlDelayedHosts"


@dataclass(slots=True)
class HostState:
    """Politeness state of one origin. ``rules`` is None until robots data arrives; ``busy``
    names the outstanding schedule holding this host while it is crawl-delayed."""

    rules: RobotsRules | None = None
    robots_queued: bool = False
    robots_attempts: int = 0
    error_delay: float = 0.0
    busy: str | None = None
    # the operator's override for this crawl (the admin's host page): a minimum delay
    # between requests, and exclusion (nothing more of the host is fetched)
    min_delay: float = 0.0
    excluded: bool = False

    def delay(self, follow_robots: bool) -> float:
        """Seconds between two requests to this host: the largest of robots.txt's
        crawl-delay (when robots are followed), the delay its errors earned and the
        operator's minimum delay."""
        robots_delay = self.rules.crawl_delay if (follow_robots and self.rules) else 0.0
        return max(float(robots_delay or 0.0), self.error_delay, self.min_delay)


def robots_url(origin: str) -> str:
    return origin + "/robots.txt"


class Politeness:
    """The hosts of one queue and their per-host lanes. ``behaviour`` is the crawl's robots
    behaviour (the queue updates it when its configuration changes)."""

    def __init__(self, ctx: LaneContext, behaviour: RobotsBehaviour) -> None:
        self._ctx = ctx
        self.behaviour = behaviour
        self.hosts: dict[str, HostState] = {}
        self.robots_lane = Lane(ctx, ROBOTS_LANE)
        self.waiting: dict[str, Lane] = {}
        self.parked: dict[str, Lane] = {}

    @property
    def follow(self) -> bool:
        return self.behaviour is not RobotsBehaviour.IGNORE

    def host(self, origin: str) -> HostState:
        """The state of ``origin``, created on first use (robots ignored: everything allowed)."""
        state = self.hosts.get(origin)
        if state is None:
            state = self.hosts[origin] = HostState()
            if self.behaviour is RobotsBehaviour.IGNORE:
                state.rules = ALLOW_ALL
        return state

    def allowed(self, state: HostState, url: str, origin: str) -> bool:
        """Whether the host's rules (which must be in) let the crawl fetch ``url``."""
        assert state.rules is not None
        if state.rules.allowed(url):
            return True
        return self.behaviour is RobotsBehaviour.ALLOW_LANDING_PAGE and url == origin + "/"

    def queue_robots(self, origin: str, state: HostState) -> str:
        """Put the host's robots.txt in the robots lane; returns its url."""
        state.robots_queued = True
        state.robots_attempts += 1
        url = robots_url(origin)
        self.robots_lane.push(QueuedUrl(url, 0, 0.0, 0, FLAG_NON_HTML).to_line())
        return url

    def wait(self, origin: str, record: QueuedUrl) -> None:
        """File a url of a host whose robots.txt is not in yet."""
        self._lane(self.waiting, WAIT_DIR, origin).push(record.to_line())

    def delayed_lane(self, origin: str) -> str | None:
        """Where a new url of ``origin`` waits if the host is crawl-delayed: "parked" while a
        schedule holds it, "unparked" when none does (taken first, and by the schedules of
        delayed hosts' urls only: its delay, not the crawl order's other urls, paces it);
        None for a host without a delay."""
        state = self.hosts.get(origin)
        if state is None or state.delay(self.follow) <= 0:
            return None
        return "parked" if state.busy is not None else "unparked"

    def park(self, origin: str, line: str) -> None:
        """Park a url of a busy crawl-delayed host (a url-file line)."""
        self._lane(self.parked, DELAYED_DIR, origin).push(line)

    def take_waiting(self, origin: str) -> tuple[list[str], list[str]] | None:
        """The lines waiting for ``origin``'s robots.txt and the files that held them; None
        when the host has no such lane."""
        return self._take(self.waiting, origin)

    def take_parked(self, origin: str) -> tuple[list[str], list[str]] | None:
        """The lines parked for ``origin`` and the files that held them (None: no lane)."""
        return self._take(self.parked, origin)

    def _lane(self, group: dict[str, Lane], folder: str, origin: str) -> Lane:
        lane = group.get(origin)
        if lane is None:
            lane = group[origin] = Lane(self._ctx, f"{folder}/{host_hash(origin)}")
        return lane

    @staticmethod
    def _take(group: dict[str, Lane], origin: str) -> tuple[list[str], list[str]] | None:
        lane = group.pop(origin, None)
        if lane is None:
            return None
        return lane.pop_all(), lane.all_files()

    # -- counts and checkpoints -------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """What :class:`~.values.QueueStats` reports about hosts and their lanes."""
        return {
            "robots_txt_queued": len(self.robots_lane),
            "waiting_robots": sum(len(lane) for lane in self.waiting.values()),
            "waiting_hosts": sum(1 for lane in self.waiting.values() if len(lane)),
            "crawl_delayed": sum(len(lane) for lane in self.parked.values()),
            "delayed_hosts": sum(1 for lane in self.parked.values() if len(lane)),
            "hosts": len(self.hosts),
        }

    def lanes(self) -> list[Lane]:
        return [self.robots_lane, *self.waiting.values(), *self.parked.values()]

    def checkpoint(self) -> tuple[dict[str, Any], list[str]]:
        """Flush the lanes; their states (robots, waiting and parked by origin) and the url
        files already read."""
        garbage: list[str] = []
        robots, dead = self.robots_lane.checkpoint()
        garbage.extend(dead)
        lanes: dict[str, Any] = {"robots": robots, "wait": {}, "delayed": {}}
        for name, group in (("wait", self.waiting), ("delayed", self.parked)):
            for origin, lane in group.items():
                lanes[name][origin], dead = lane.checkpoint()
                garbage.extend(dead)
        return lanes, garbage

    def restore(self, hosts: dict[str, HostState], lanes: dict[str, Any]) -> None:
        """Take back what :meth:`checkpoint` (and the hosts) recorded."""
        ctx = self._ctx
        robots: LaneState = lanes["robots"]
        self.hosts = hosts
        self.robots_lane = Lane(ctx, robots.rel_dir, robots)
        self.waiting = {o: Lane(ctx, s.rel_dir, s) for o, s in lanes["wait"].items()}
        self.parked = {o: Lane(ctx, s.rel_dir, s) for o, s in lanes["delayed"].items()}
