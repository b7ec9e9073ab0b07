"""The crawl engine in plain Python (no Django, no Celery), one package per process.

* :mod:`.definition` - what a crawl is (configuration, state machine, site rules, seeds,
  per-seed policies, needy queries): read by every process;
* :mod:`.queue_server` - the queue-server process: one shard of a crawl, its queue and index;
* :mod:`.scheduler` - the web crawl queue the queue server serves schedules from;
* :mod:`.archive` - archive crawls (their queue and worker) and WARC export;
* :mod:`.fetcher` - the fetcher process: one schedule downloaded, processed and shipped;
* :mod:`.http` - the fetcher's HTTP client (egress rules, DNS cache, paced downloads);
* :mod:`.processing` - page processing: a downloaded page into index documents;
* :mod:`.transport` - what crosses processes: wire forms, batches, envelopes, the spool.

Cross-process modules kept here: :mod:`.urls` (url canonical form and url facts),
:mod:`.memory` (returning freed heap to the system) and :mod:`.local_crawl` (a whole crawl,
every process's part, in one process).
"""
