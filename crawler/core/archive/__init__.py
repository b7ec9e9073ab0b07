"""Archive crawls and WARC export: the engine reads and writes web archives.

Layer: ``crawler.core`` (pure Python; ``warcio`` for the WARC record format). Yioop has two
kinds of crawl, a web crawl and an *archive crawl*, which re-indexes pages already fetched
(an earlier crawl's or an archive file's) with the current Page Options without downloading
anything again (the seed, "Yioop Search Engine Ranking Mechanisms": "the process for an archive
crawl is somewhat different"). Here an archive crawl runs through the web crawl's own machinery:
its queue servers hand out schedules of *record pointers* instead of urls
(:class:`.queue.ArchiveQueue`, in place of the crawl queue), and a fetcher "fetches" a pointer
by reading the record (:class:`.worker.ArchiveWorker`, beside the schedule worker), then hands
it to the same page handling (processors, Page Options, scrapers, page rules, robots metas) and
outboxes; the indexer is unchanged. One concern per module:

* ``source.py`` - :class:`ArchiveSource` (what a crawl reads) and record pointers on the wire;
* ``warc_scan.py`` - walking WARC files record by record, resumably, bad records named;
* ``stored.py`` - an earlier crawl's stored pages: listing them and reading one;
* ``records.py`` - a fetcher reads one pointer into an :class:`ArchivedPage`;
* ``skipped.py`` - records skipped, by reason (bad records, pages without a cached copy);
* ``queue.py`` - the archive crawl's queue on a queue server;
* ``ordering.py`` - batches applied in schedule order (the archive keeps the crawl's order);
* ``worker.py`` - the fetcher side of one archive schedule;
* ``export.py`` and ``cdxj.py`` - a crawl's stored pages as a WARC 1.1 file and its CDXJ index.
"""
