"""kill -9 a process that adds urls and hands out and acknowledges schedules, at random moments,
many times; then check that nothing accepted was lost and nothing acknowledged came back."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crawler.core.scheduler import CrawlQueue

from .crash_worker import ROBOTS, batch_urls, config

WORKER = Path(__file__).with_name("crash_worker.py")
KILLS = 22


def _run_and_kill(queue_dir: Path, run: int, rng: random.Random) -> list[str]:
    proc = subprocess.Popen([sys.executable, str(WORKER), str(queue_dir), str(run)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if first != "O\n":
        proc.kill()
        raise AssertionError(f"worker did not start: {first!r} {proc.stderr.read()}")
    time.sleep(rng.uniform(0.02, 0.45))
    proc.send_signal(signal.SIGKILL)
    rest, errors = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, errors
    lines = rest.split("\n")
    return lines[:-1]  # the last piece may be a torn line


@pytest.mark.slow
def test_kill_minus_nine_loses_nothing_and_repeats_nothing(tmp_path: Path) -> None:
    rng = random.Random(20250601)
    queue_dir = tmp_path / "queue"
    events: list[list[str]] = []
    for run in range(KILLS):
        events.extend(line.split(" ") for line in _run_and_kill(queue_dir, run, rng) if line)

    accepted: set[str] = set()
    issued: dict[str, list[str]] = {}
    acked: set[str] = set()
    owner: dict[str, str] = {}
    for event in events:
        kind = event[0]
        if kind == "A":
            accepted.update(batch_urls(int(event[1]), int(event[2])))
        elif kind == "S":
            sid, urls = event[1], event[2:]
            assert sid not in acked, f"acknowledged schedule {sid} handed out again"
            if sid in issued:
                assert issued[sid] == urls, f"schedule {sid} changed when re-issued"
            issued[sid] = urls
            for url in urls:
                assert owner.setdefault(url, sid) == sid, f"{url} in two schedules"
        elif kind == "K":
            acked.add(event[1])
    assert len(acked) > 20 and len(accepted) > 1000

    # the survivor: drain everything left, as fetchers would
    queue = CrawlQueue.open(queue_dir, config())
    far = time.time() + 10_000
    drained: list[str] = []
    while (schedule := queue.next_schedule(far)) is not None:
        assert schedule.id not in acked
        if schedule.id in issued:
            assert schedule.urls == issued[schedule.id]
        for entry in schedule.entries:
            if entry.is_robots:
                queue.add_robots(entry.url, ROBOTS, 200)
        for url in schedule.urls:
            assert owner.setdefault(url, schedule.id) == schedule.id, f"{url} twice"
        drained.extend(schedule.urls)
        assert queue.acknowledge(schedule.id)
        far += 1
    stats = queue.stats()
    queue.close()

    scheduled = set(owner)
    pages = {url for url in scheduled if not url.endswith("/robots.txt")}
    assert not {url for url in pages if "/private/" in url}, "a disallowed url was scheduled"
    public = {url for url in accepted if "/private/" not in url}
    missing = public - pages
    assert not missing, f"{len(missing)} accepted urls lost, e.g. {sorted(missing)[:3]}"
    assert stats.queued == 0 and stats.waiting_robots == 0 and stats.crawl_delayed == 0
    assert stats.outstanding_schedules == 0
