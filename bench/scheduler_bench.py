"""Crawl-queue throughput: urls per second added and scheduled (prints numbers; not a test).

Usage: ``python bench/scheduler_bench.py [--urls N] [--hosts H] [--batch B] [--order ORDER]``.
Adds N new urls over H hosts in batches of B (one fsync per batch, as a queue server does per
fetcher message), with robots.txt data for every host and one host in ten crawl-delayed, then
takes and acknowledges schedules of 5,000 until the queue is empty.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.core.definition.crawl import CrawlOrder
from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, SchedulerConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--hosts", type=int, default=2_000)
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--order", default=CrawlOrder.HOST_BUDGETING.value,
                        choices=[o.value for o in CrawlOrder])
    parser.add_argument("--no-fsync", action="store_true")
    args = parser.parse_args()
    config = SchedulerConfig(order=CrawlOrder(args.order), bloom_expected_urls=args.urls * 2,
                             fsync=not args.no_fsync)
    with tempfile.TemporaryDirectory() as tmp:
        queue = CrawlQueue.open(Path(tmp) / "queue", config)
        for h in range(args.hosts):
            delay = "Crawl-delay: 2\n" if h % 10 == 0 else ""
            queue.add_robots(f"http://host{h}.example", f"User-agent: *\n{delay}"
                             "Disallow: /private/\n", 200)
        start = time.perf_counter()
        added = 0
        for first in range(0, args.urls, args.batch):
            batch = [DiscoveredUrl(f"http://host{(first + j) % args.hosts}.example/page/{first + j}",
                                   2, j % 50, source_url=f"http://src{j % 97}.org/",
                                   source_weight=j % 7, source_tier=j % 3,
                                   opic_cash=0.001)
                     for j in range(min(args.batch, args.urls - first))]
            added += queue.add_discovered(batch)
        add_time = time.perf_counter() - start
        start = time.perf_counter()
        scheduled = schedules = 0
        now = time.time()
        while (schedule := queue.next_schedule(now)) is not None:
            scheduled += len(schedule)
            schedules += 1
            queue.acknowledge(schedule.id)
        schedule_time = time.perf_counter() - start
        stats = queue.stats()
        start = time.perf_counter()
        queue.close()
        close_time = time.perf_counter() - start
    print(f"order {args.order}: {added:,} urls added in {add_time:.2f}s = "
          f"{added / add_time:,.0f} urls/s (batches of {args.batch}, fsync per batch: "
          f"{not args.no_fsync})")
    print(f"{scheduled:,} urls scheduled in {schedules} schedules in {schedule_time:.2f}s = "
          f"{scheduled / schedule_time:,.0f} urls/s")
    print(f"close (checkpoint) {close_time:.2f}s; left queued {stats.queued}, "
          f"crawl-delayed {stats.crawl_delayed}")


if __name__ == "__main__":
    main()
