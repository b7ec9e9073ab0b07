"""An IndexDocumentBundle as a whole: its layout, its writer, its reader, and its checks.

:mod:`.layout` (file names and small top-level files), :mod:`.writer` (the queue server's
indexer appends documents), :mod:`.reorder` (re-order a finished partition by importance),
:mod:`.retired` (copies a recrawl replaced), :mod:`.reader` (the query side's view) and
:mod:`.verify` (whole-bundle checks for ``index_verify`` / ``index_info``). The writer runs in
the queue server; the reader in search (web process and queue servers' shard endpoints).
"""
