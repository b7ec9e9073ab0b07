"""The bundle's dictionary: the on-disk B+-tree from term_id to per-partition postings.

:mod:`.tree` (the tree and its files), :mod:`.node_format` (one node's bytes), :mod:`.stream`
(the streaming rebuild) and :mod:`.updater` (the DictionaryUpdater, which merges closed
partitions into the tree). The updater runs as its own process beside each queue server
(``python -m indexer.core.dictionary.updater BUNDLE``); search reads the tree.
"""
