"""Crawl management, a Django app: crawls and their Page Options, the crawl processes' glue and
the crawler's admin, around the pure-Python engine in ``crawler.core``.

At the top: the models (:mod:`.models`), reads (:mod:`.selectors`, :mod:`.crawl_page`) and
writes (:mod:`.services`, which send the lifecycle :mod:`.signals`), the Celery tasks
(:mod:`.tasks`), link analysis requests (:mod:`.link_analysis`), WARC export
(:mod:`.warc_export`), field validators and the ``/bot`` page. In folders: the admin
(:mod:`.admin`, web processes), the queue-server and fetcher processes' glue (:mod:`.machines`),
and the url and host logs (:mod:`.hosts`).
"""
