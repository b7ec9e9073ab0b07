"""The book of schedules handed out and not yet acknowledged.

Layer: ``crawler.core.scheduler``. Invariant: a url handed out in a schedule is handed out again
only in that same schedule (same id) after its deadline passed (or it was released: no fetcher
holds it), never after the schedule was acknowledged; a fetcher (``requester``) that asks again
while it holds a schedule gets that schedule back, so a retried request does not take a second
one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from crawler.core.scheduler.values import Schedule


@dataclass(slots=True)
class Outstanding:
    """A schedule out with a fetcher: the crawl-delayed hosts it holds busy and the origins
    whose robots.txt it carries (both are released when it is acknowledged)."""

    schedule: Schedule
    delayed_hosts: tuple[str, ...]
    robots_origins: tuple[str, ...]
    requester: str | None


class ScheduleBook:
    """Outstanding schedules by id (oldest first) and the schedule each requester holds."""

    def __init__(self) -> None:
        self.schedules: dict[str, Outstanding] = {}
        self.requesters: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.schedules)

    def held_by(self, requester: str | None) -> Schedule | None:
        """The unacknowledged schedule ``requester`` holds, if any."""
        if requester is None:
            return None
        sid = self.requesters.get(requester)
        if sid is None or sid not in self.schedules:
            return None
        return self.schedules[sid].schedule

    def reissue_expired(self, now: float, timeout: float,
                        requester: str | None) -> Schedule | None:
        """The oldest schedule whose deadline passed, handed out again to ``requester`` (same
        id and urls, a new deadline; it moves to the back of the book); None when none."""
        for sid, out in self.schedules.items():
            if out.schedule.deadline <= now:
                out.schedule = replace(out.schedule, issued_at=now, deadline=now + timeout,
                                       reissue=out.schedule.reissue + 1)
                out.requester = requester
                del self.schedules[sid]
                self.add(out)
                return out.schedule
        return None

    def release(self, sids: list[str], now: float) -> list[str]:
        """Make these outstanding schedules due now (no fetcher holds them: see
        :meth:`.queue.CrawlQueue.release`), keeping their place in the book; the ids it
        released, in book order (unknown or acknowledged ids are ignored)."""
        wanted = set(sids)
        released = []
        for sid, out in self.schedules.items():
            if sid in wanted and out.schedule.deadline > now:
                out.schedule = replace(out.schedule, deadline=now)
                released.append(sid)
        return released

    def add(self, out: Outstanding) -> None:
        sid = out.schedule.id
        self.schedules[sid] = out
        if out.requester is not None:
            self.requesters[out.requester] = sid

    def restore(self, outstanding: list[Outstanding], requesters: dict[str, str]) -> None:
        self.schedules = {out.schedule.id: out for out in outstanding}
        self.requesters = dict(requesters)

    def free_host(self, sid: str, origin: str, of_origin: Callable[[str], str]) -> bool:
        """The fetcher of schedule ``sid`` is done with the crawl-delayed host ``origin``:
        it no longer holds it, and its urls leave the schedule (fetched and applied: a
        schedule handed out again does not request them again, beside the next holder of
        the host). False when ``sid`` is not outstanding or does not hold ``origin``."""
        out = self.schedules.get(sid)
        if out is None or origin not in out.delayed_hosts:
            return False
        out.delayed_hosts = tuple(o for o in out.delayed_hosts if o != origin)
        out.schedule = replace(out.schedule, entries=tuple(
            e for e in out.schedule.entries if of_origin(e.url) != origin))
        return True

    def pop(self, sid: str) -> Outstanding | None:
        """Forget an acknowledged schedule; None when it is not outstanding."""
        out = self.schedules.pop(sid, None)
        if out is not None and out.requester is not None \
                and self.requesters.get(out.requester) == sid:
            del self.requesters[out.requester]
        return out

    def all(self) -> list[Schedule]:
        return [out.schedule for out in self.schedules.values()]
