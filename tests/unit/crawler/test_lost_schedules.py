"""The queue server's side of schedule claims (issue 18): an outstanding schedule no fetcher
holds goes out again at once (given back) or after ``unclaimed_timeout`` (never claimed, or its
fetcher's claim lapsed), waiting twice as long for each copy already out, at most the schedule
timeout; held and done schedules are left alone. The release survives a kill -9 of the queue
server (it is journaled like every queue call)."""

from __future__ import annotations

import shutil

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.queue_server.claims import DONE, HELD, RETURNED, lost_schedules, unclaimed_wait
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.scheduler import Schedule

T0 = 1_750_000_000.0
SEEDS = [f"https://h{i}.example/" for i in range(3)]


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def core_for(path, clock: Clock) -> QueueServerCore:
    crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t",
                        seeds=tuple(SeedSpec(u) for u in SEEDS))
    return QueueServerCore(QueueServerConfig(0, 1, path, crawl, schedule_size=1,
                                             schedule_timeout=600.0, unclaimed_timeout=10.0,
                                             max_outstanding=3), clock=clock)


def test_given_back_at_once_unclaimed_after_the_timeout_held_and_done_kept(tmp_path):
    clock = Clock()
    core = core_for(tmp_path, clock)
    core.add_seeds(SEEDS)
    a, b, c = core.take_schedules()              # three robots.txt schedules of one url
    claims = {a.id: RETURNED, b.id: HELD}
    assert core.release_lost(claims) == [a.id]   # given back: at once
    (again,) = core.take_schedules()
    assert (again.id, again.urls, again.reissue) == (a.id, a.urls, 1)
    clock.now = T0 + 9.0
    assert core.release_lost({b.id: HELD}) == []
    clock.now = T0 + 10.0                        # c was never claimed; a's copy waits longer
    assert core.release_lost({b.id: HELD}) == [c.id]
    assert [(s.id, s.reissue) for s in core.take_schedules()] == [(c.id, 1)]
    assert core.release_lost({b.id: HELD, c.id: DONE}) == []
    clock.now = T0 + 19.0
    assert core.release_lost({b.id: DONE, c.id: HELD}) == []
    clock.now = T0 + 20.0                        # a's copy: twice the wait, from its issue
    assert core.release_lost({b.id: DONE, c.id: HELD}) == [a.id]
    assert [s.id for s in core.take_schedules()] == [a.id]
    # nothing lost is handed out twice in one go, and an acknowledged schedule is not released
    assert core.take_schedules() == []
    assert core.queue.acknowledge(b.id)
    assert core.release_lost({}) == []
    core.close()


def test_a_release_survives_a_crash_of_the_queue_server(tmp_path):
    clock = Clock()
    core = core_for(tmp_path / "qs", clock)
    core.add_seeds(SEEDS)
    first, *_ = core.take_schedules()
    assert core.release_lost({first.id: RETURNED}) == [first.id]
    crashed = tmp_path / "crashed"
    shutil.copytree(tmp_path / "qs", crashed)   # a copy taken without closing: a kill -9
    for lock in crashed.rglob("LOCK"):
        lock.unlink()
    copy = core_for(crashed, clock)
    (again,) = copy.take_schedules()
    assert (again.id, again.reissue) == (first.id, 1)
    copy.close()
    core.close()


def schedule(reissue: int, issued_at: float = T0) -> Schedule:
    return Schedule("s", (), issued_at, issued_at + 600.0, 10, reissue)


def test_unclaimed_wait_doubles_and_is_bounded_by_the_schedule_timeout():
    assert [unclaimed_wait(schedule(r), 10.0, 600.0) for r in range(8)] == [
        10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0, 600.0]
    assert unclaimed_wait(schedule(10_000), 10.0, 600.0) == 600.0
    assert lost_schedules([schedule(1)], {}, T0 + 19.9, 10.0, 600.0) == []
    assert lost_schedules([schedule(1)], {}, T0 + 20.0, 10.0, 600.0) == ["s"]
