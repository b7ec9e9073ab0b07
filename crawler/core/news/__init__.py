"""News sources (Yioop's Media Sources): RSS and Atom feeds fetched on a schedule, each item a
document of the news index.

Layer: ``crawler.core`` (pure Python). :mod:`.fetch` downloads and reads one feed through the
crawler's HTTP layer (``crawler.core.http``: its egress allow-list, deadlines and byte limit),
:mod:`.documents` turns a feed item into an index document with the page processor the
crawl uses, :mod:`.index` appends them to the news IndexDocumentBundle. The glue
(``crawler.news``) keeps the sources and the items already indexed in the database and runs
the updates from a Celery task the scheduler starts; the search page's News tab
(``ranking.searchpage.news``) reads the bundle.
"""
