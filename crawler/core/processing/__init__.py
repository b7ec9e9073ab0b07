"""Page processing: all that turns one downloaded page into index documents.

Runs in: the fetcher process (in its page-processing worker processes,
``crawler.core.fetcher.processing``), the archive worker, and the admin's Page Options test.
Entry point: :class:`.process.PageProcessor` (configured by :mod:`.config`) turns a
:class:`.page.FetchedPage` into a :class:`.page.ProcessedPage`;
:func:`.indexing.to_index_documents` turns that into ``IndexDocument`` values. Beside them: MIME
and encoding detection, the per-type processors (:mod:`.processors`), links, meta words, robot
meta tags, page rules, scrapers, the safe-search test, summarizers (:mod:`.summarizers`) and
indexing plugins (:mod:`.plugins`).
"""
