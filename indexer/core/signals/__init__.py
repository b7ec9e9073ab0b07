"""Files derived from a crawl or a bundle that search and the crawler score with.

:mod:`.link_scores` (link analysis's per-url scores, read by search and by the fetchers'
link ordering) and :mod:`.phrases` (a bundle's common phrases, built by each queue server for
its shard and read by search). Both are written by batch jobs and re-read by their readers
through :class:`indexer.core.runtime.reloading.ReloadingFile` when the file changes.
"""
