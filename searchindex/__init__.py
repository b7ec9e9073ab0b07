"""Which index the search page answers from: the admin's choice (one ``SearchIndex`` row) and
the crawl mixes (``CrawlMix``, ``CrawlMixMember``), with their reads, writes and admin.

A Django app of the web processes, between search (``ranking``, which reads the choice) and
crawl management (``crawler``, whose crawls the choice names). The crawler never imports it: the
crawl services send the lifecycle signals of :mod:`crawler.signals`, and this app's receivers
(connected in :meth:`searchindex.apps.SearchIndexConfig.ready`) keep the choice in step with
the crawls.
"""
