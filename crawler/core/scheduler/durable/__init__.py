"""The crawl queue on disk: durable-file helpers (:mod:`.storage`), the write-ahead journal
(:mod:`.journal`), checkpoint generations and recovery (:mod:`.checkpoints`), the versioned
state file (:mod:`.state`) and the reader of the old pickled format (:mod:`.legacy_state`).

Runs in: the queue-server process, inside :class:`crawler.core.scheduler.CrawlQueue`.
"""
