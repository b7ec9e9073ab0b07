"""The byte-level building blocks every file of an index bundle is made of.

Durable files (atomic replace, framing with version and checksum, append-only logs, locks:
:mod:`.storage`), the record codec of typed columns (:mod:`.packed_table`, with its column-wise
numpy path :mod:`.packed_columns`) and the bit codes (:mod:`.codes`). Nothing here knows what a
document, a partition or a term is. Runs in every process that reads or writes a bundle: the
queue server's indexer, the dictionary updater, search, and the index commands.
"""
