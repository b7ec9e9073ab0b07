"""Which queued url goes next: the seed's host-budgeting formulas and url facts
(:mod:`.formulas`), OPIC cash and history (:mod:`.opic`), and the crawl orders as strategies
(:mod:`.orders`).

Runs in: the queue-server process, inside :class:`crawler.core.scheduler.CrawlQueue`.
"""
