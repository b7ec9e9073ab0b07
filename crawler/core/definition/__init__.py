"""What a crawl is, as every crawl process reads it: the crawl's frozen configuration and state
machine (:mod:`.crawl`), its url filter (:mod:`.siterules`), its seed urls (:mod:`.seeds`), the
per-seed policies (:mod:`.policy`) and the needy queries that steer it (:mod:`.needy`).

Runs in: every process. The glue (``crawler.selectors``, ``crawler.services``, the admin) builds
these values from database rows; the queue server, its scheduler and the fetchers receive them
and nothing else. Pure Python; imports no other ``crawler.core`` package except
``crawler.core.archive.source`` and the linear-time regexes of ``crawler.core.processing``.
"""
