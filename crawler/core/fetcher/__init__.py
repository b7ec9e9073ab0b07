"""The fetcher: what a fetcher process does with one schedule (download, process, ship).

Layer: ``crawler.core`` (pure Python). Beside it, ``crawler.core.http`` is its HTTP layer (as
Scrapy's downloader is to its engine): safe, bounded downloads, the DNS cache, one round's
downloads, paced fetching of crawl-delayed hosts. This package knows schedules, pages and queue
servers; one concern per module:

* ``worker.py`` - :class:`ScheduleWorker`: orchestrates one schedule, :class:`WorkerReport`;
* ``rounds.py`` - :class:`Rounds`: the plain urls, a round at a time, one round ahead;
* ``lanes.py`` - :class:`DelayLanes`: one serial lane per crawl-delayed host;
* ``pages.py`` - :class:`PageHandler`: one download processed into the outboxes;
* ``processing.py`` - :class:`PageProcessing`: where pages are processed (in the thread, or
  in a :class:`ProcessPool` of worker processes sized to the cores);
* ``emit.py`` - :class:`LinkEmitter`: a page's links as discovered urls;
* ``outboxes.py`` - :class:`Outboxes`: what waits for each queue server, and when to ship;
* ``stats.py`` - :class:`ScheduleStats`: one schedule's counters and handed-back urls.

The batch shipped to a queue server is :class:`crawler.core.transport.batch.FetcherBatch`.
"""

from __future__ import annotations

from crawler.core.fetcher.worker import ScheduleWorker, WorkerReport

__all__ = ["ScheduleWorker", "WorkerReport"]
