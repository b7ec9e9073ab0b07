#!/usr/bin/env python
"""The admin's url and host lists at a million urls (issue 19, item 3).

    .venv/bin/python bench/hosts_bench.py [--urls 1000000] [--hosts 100000]

In a private temporary directory (a fresh SQLite database, migrated): writes ``--urls``
fetched-url rows and as many refused-url rows (five reasons) of one crawl, over ``--hosts``
hosts, the way a queue server writes them (``crawler.hosts.activity.activity_write``, one
transaction per round of 5,000 downloads), then times the first and a middle page of each
list as the admin reads it (``crawler.hosts.selectors``: keyset pages of 50): fetched urls,
refused urls of one reason, the refused urls' summary, hosts by name, by requests and by
errors, and one host's page. Each time is the median of 7 reads. Prints ``name: value unit``
lines and a ``target:`` line: every page under 50 ms on SQLite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 50.0
ROUND = 5000
REASONS = ("robots", "depth", "site_rules", "fetch_error", "egress")


def setup(directory: Path) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ["DJANGO_SETTINGS_MODULE"] = "searchsite.settings.base"
    os.environ["DATABASE_URL"] = f"sqlite:///{directory / 'db.sqlite3'}"
    os.environ["VAR_DIRECTORY"] = str(directory / "var")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", "--noinput", verbosity=0)


def fill(crawl_id: int, urls: int, hosts: int) -> float:
    """Write the rows as queue servers do; returns the seconds it took."""
    from crawler.core.queue_server.activity import Activity, FetchedRow, HostDelta, RefusedRow
    from crawler.hosts.activity import activity_write

    started = time.perf_counter()
    t0 = 1_750_000_000.0
    for start in range(0, urls, ROUND):
        fetched, refused, deltas, counts = [], [], {}, {}
        for i in range(start, min(urls, start + ROUND)):
            origin = f"http://host{i % hosts:07}.example"
            status = 503 if i % 17 == 0 else 200
            fetched.append(FetchedRow(f"{origin}/page/{i}.html", origin, status, 1000 + i % 5000,
                                      t0 + i, ""))
            reason = REASONS[i % len(REASONS)]
            refused.append(RefusedRow(f"{origin}/refused/{i}.html", origin, reason, ""))
            counts[reason] = counts.get(reason, 0) + 1
            delta = deltas.setdefault(origin, HostDelta(politeness=(0.0, True, False)))
            delta.requests += 1
            delta.errors += status >= 500
            delta.size += 1000
            delta.refused += 1
            delta.last_fetch, delta.last_status = t0 + i, status
        activity_write(crawl_id, 0, Activity(tuple(fetched), tuple(refused), deltas, counts))
    return time.perf_counter() - started


def timed(read) -> float:
    """The median milliseconds of 7 reads (one more first, to warm the cache)."""
    read()
    times = []
    for _ in range(7):
        started = time.perf_counter()
        read()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def middles(crawl_id: int) -> dict[str, str]:
    """Cursors in the middle of each list (found once, not timed)."""
    from crawler.models.hosts import CrawlHost, FetchedUrl, RefusedUrl

    fetched = FetchedUrl.objects.filter(crawl_id=crawl_id)
    refused = RefusedUrl.objects.filter(crawl_id=crawl_id, reason="robots")
    hosts = CrawlHost.objects.filter(crawl_id=crawl_id)
    n_hosts = hosts.count()
    by_requests = hosts.order_by("-requests", "-id")[n_hosts // 2]
    by_errors = hosts.order_by("-errors", "-id")[n_hosts // 2]
    return {
        "fetched": str(fetched.order_by("-id").values_list("id", flat=True)
                       [fetched.count() // 2]),
        "refused": str(refused.order_by("-id").values_list("id", flat=True)
                       [refused.count() // 2]),
        "origin": hosts.order_by("origin").values_list("origin", flat=True)[n_hosts // 2],
        "requests": f"{by_requests.requests}.{by_requests.id}",
        "errors": f"{by_errors.errors}.{by_errors.id}",
    }


def measure(crawl_id: int) -> dict[str, float]:
    from crawler.hosts import selectors as reads

    mid = middles(crawl_id)
    some_host = mid["origin"]

    def page(read, *args, **kwargs):
        def run():
            rows = read(crawl_id, *args, **kwargs).rows
            assert len(rows) == reads.PAGE_SIZE, (read.__name__, len(rows))
        return run

    return {
        "fetched_first_page": timed(page(reads.fetched_page)),
        "fetched_middle_page": timed(page(reads.fetched_page, before=mid["fetched"])),
        "refused_first_page": timed(page(reads.refused_page, "robots")),
        "refused_middle_page": timed(page(reads.refused_page, "robots",
                                          before=mid["refused"])),
        "refused_summary": timed(lambda: reads.refused_summary(crawl_id)),
        "hosts_by_name_first_page": timed(page(reads.hosts_page, "origin")),
        "hosts_by_name_middle_page": timed(page(reads.hosts_page, "origin", mid["origin"])),
        "hosts_by_requests_first_page": timed(page(reads.hosts_page, "requests")),
        "hosts_by_requests_middle_page": timed(page(reads.hosts_page, "requests",
                                                    mid["requests"])),
        "hosts_by_errors_middle_page": timed(page(reads.hosts_page, "errors", mid["errors"])),
        "host_page": timed(lambda: reads.host_get(crawl_id, some_host)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hosts-bench-") as tmp:
        setup(Path(tmp))
        from crawler import services
        from crawler.models import Crawl

        crawl = Crawl.objects.create(name="bench",
                                     page_options=services.page_options_default_get())
        seconds = fill(crawl.pk, args.urls, args.hosts)
        print(f"fetched_urls: {args.urls} rows")
        print(f"refused_urls: {args.urls} rows")
        print(f"hosts: {args.hosts} rows")
        print(f"write_rate: {2 * args.urls / seconds:.0f} url rows/s")
        print(f"database_size: {(Path(tmp) / 'db.sqlite3').stat().st_size / 2**20:.0f} MiB")
        results = measure(crawl.pk)
    for name, ms in results.items():
        print(f"{name}: {ms:.2f} ms")
    worst = max(results.values())
    verdict = "met" if worst < TARGET_MS else "MISSED"
    print(f"target: every page under {TARGET_MS:.0f} ms on SQLite at {args.urls} urls: "
          f"{verdict} (slowest {worst:.2f} ms)")
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
