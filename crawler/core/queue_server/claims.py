"""Schedule claims: which schedules a fetcher holds, and which outstanding ones nobody does.

Layer: ``crawler.core`` (pure Python; the store is the glue's ``crawler.machines.claim_store``). A
fetcher *claims* a schedule before it runs it and keeps the claim fresh while it works (it
lapses a few seconds after the fetcher dies); when it ends, the claim says *done*, or
*returned* when the fetcher gave the schedule back unfinished (the crawl stopped, or the run
failed). A copy of a schedule that is held or done is dropped by the fetcher that receives
it, so handing a schedule out again is harmless while its first copy waits in the broker.

The queue server reads the claims of its outstanding schedules (:func:`lost_schedules`) and
hands out again, without waiting for the schedule timeout:

* a returned schedule, at once;
* a schedule nobody claims (its message was lost with the broker or with a fetcher killed
  before it claimed, or its fetcher died and the claim lapsed) once ``unclaimed_timeout``
  passed since it was handed out, doubled for each time it was already handed out again (a
  schedule only waiting for a free fetcher is copied a few times at most in a long wait).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from crawler.core.scheduler import Schedule

HELD = "held"          # a fetcher is working on it
DONE = "done"          # its fetcher finished it; the acknowledgement is on its way
RETURNED = "returned"  # its fetcher gave it back unfinished
STATES = frozenset({HELD, DONE, RETURNED})

MAX_DOUBLINGS = 16


def unclaimed_wait(schedule: Schedule, unclaimed_timeout: float, timeout: float) -> float:
    """How long after it was (last) handed out ``schedule`` may stay unclaimed."""
    doublings = min(max(0, schedule.reissue), MAX_DOUBLINGS)
    return min(unclaimed_timeout * (2 ** doublings), timeout)


def lost_schedules(outstanding: Iterable[Schedule], claims: Mapping[str, str], now: float,
                   unclaimed_timeout: float, timeout: float) -> list[str]:
    """The ids of the ``outstanding`` schedules no fetcher holds (see the module docstring);
    ``claims`` maps schedule id -> :data:`HELD`, :data:`DONE` or :data:`RETURNED` (no entry:
    nobody claimed it, or the claim lapsed)."""
    lost = []
    for schedule in outstanding:
        state = claims.get(schedule.id)
        if state == RETURNED:
            lost.append(schedule.id)
        elif state is None and now >= schedule.issued_at + unclaimed_wait(
                schedule, unclaimed_timeout, timeout):
            lost.append(schedule.id)
    return lost
