"""The queue server: one shard of one crawl, its crawl queue and its index.

Runs in: the queue-server process (``manage.py run_queue_server``, ``crawler.machines.queue_server``)
and, for a whole crawl in one process, :mod:`crawler.core.local_crawl`. The facade is
:class:`.server.QueueServerCore`; applying one fetcher batch is :mod:`.applying`, host stalls,
drops and operator overrides :mod:`.hosts`; the queue it serves from is any
:class:`.source.QueueSource` (the web crawl queue or the archive queue). Beside them, what the
queue server keeps per crawl: activity for the admin (:mod:`.activity`), disk watermarks
(:mod:`.disk_space`), schedule claims (:mod:`.claims`), pages shipped in parts
(:mod:`.page_parts`), page recrawl (:mod:`.recrawl`), index importance order
(:mod:`.index_order`), robots.txt failures (:mod:`.robots_failures`) and copy freshness
(:mod:`.freshness`).
"""
