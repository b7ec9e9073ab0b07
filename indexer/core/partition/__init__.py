"""One partition of a bundle and its derived files: doc_map, positions, postings.

:mod:`.build` makes a partition's derived files from its stored documents (grouping and
doc_map order from :mod:`.grouping`, the term lists of :mod:`.term_lists` in the formats of
:mod:`.positions` and :mod:`.postings`, the doc_map of :mod:`.doc_map`). Written by the queue
server's indexer (through :mod:`indexer.core.bundle.writer`) and the dictionary updater; read by
search through :mod:`indexer.core.bundle.reader`.
"""
