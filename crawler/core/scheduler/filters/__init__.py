"""The crawl queue's seen-url filters: a fixed Bloom filter (:mod:`.bloom`) and the scalable one
that grows with the crawl (:mod:`.scalable_bloom`).

Runs in: the queue-server process, inside :class:`crawler.core.scheduler.CrawlQueue`.
"""
