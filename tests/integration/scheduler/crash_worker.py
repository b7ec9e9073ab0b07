"""A queue server and fetcher in one process, for the kill -9 test (run as a script).

Usage: ``python crash_worker.py QUEUE_DIR RUN``. Loops forever: adds a batch of new urls, takes a
schedule, answers its robots.txt urls, and acknowledges it (or, one time in four, drops it, as a
dying fetcher would). Each line on stdout is printed only after the call it reports returned:

* ``A <run> <batch>``  — ``batch_urls(run, batch)`` were accepted;
* ``S <id> <url> ...`` — a schedule was handed out;
* ``K <id>``           — that schedule was acknowledged.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, SchedulerConfig  # noqa: E402

ROBOTS = "User-agent: *\nDisallow: /private/\n"
HOSTS = 12


def config() -> SchedulerConfig:
    return SchedulerConfig(schedule_size=150, url_buffer=40, max_file_bytes=4096,
                           bloom_expected_urls=200_000, schedule_timeout=0.3,
                           checkpoint_journal_bytes=200_000)


def batch_urls(run: int, batch: int) -> list[str]:
    urls = []
    for j in range(60):
        host = f"http://h{(run * 7 + batch + j) % HOSTS}.test"
        part = "private" if j % 10 == 0 else "pub"
        urls.append(f"{host}/{part}/r{run}/b{batch}/{j}")
    return urls


def main() -> None:
    queue_dir, run = sys.argv[1], int(sys.argv[2])
    rng = random.Random(run)
    out = sys.stdout
    queue = CrawlQueue.open(queue_dir, config())
    out.write("O\n")
    out.flush()
    batch = 0
    while True:
        if rng.random() < 0.6:
            queue.add_discovered(DiscoveredUrl(url, 1, i)
                                 for i, url in enumerate(batch_urls(run, batch)))
            out.write(f"A {run} {batch}\n")
            out.flush()
            batch += 1
        schedule = queue.next_schedule()
        if schedule is None:
            time.sleep(0.01)
            continue
        out.write(f"S {schedule.id} {' '.join(schedule.urls)}\n")
        out.flush()
        for entry in schedule.entries:
            if entry.is_robots:
                queue.add_robots(entry.url, ROBOTS, 200)
        if rng.random() < 0.75:
            queue.acknowledge(schedule.id)
            out.write(f"K {schedule.id}\n")
            out.flush()


if __name__ == "__main__":
    main()
