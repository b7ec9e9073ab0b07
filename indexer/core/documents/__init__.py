"""Documents of the index: the unit a fetcher ships, its stored form, and the document store.

:mod:`.document` (:class:`~.document.IndexDocument`, built by the fetchers' page processing),
:mod:`.encoding` (documents checked and encoded for storage, and batches of them),
:mod:`.doc_index` (the index blob kept beside each summary) and :mod:`.store` (the
PartitionDocumentBundle: stored summaries and cached pages). Encoded in the fetcher processes,
appended by the queue server's indexer, read by search and the index commands.
"""
