"""The news index: one IndexDocumentBundle all news sources' items go to.

Layer: ``crawler.core.news``. One writer at a time (the bundle's lock): :class:`NewsIndex`
raises :class:`indexer.core.errors.IndexLockedError` when another update holds it, and the
caller leaves the sources due for the next run. Appended documents are made searchable at
once (the active partition refreshed); a partition closed because it was full is merged into
the dictionary before the writer lets go, so no other process is needed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater
from indexer.core.documents.document import IndexDocument

NEWS_PARTITION_DOCS = 20_000


class NewsIndex:
    """``with NewsIndex(path) as index: index.add(docs)``; the bundle is created when missing."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._writer = IndexBundleWriter(self.path, BundleConfig(
            max_partition_docs=NEWS_PARTITION_DOCS, refresh_every_docs=0))

    def add(self, documents: Sequence[IndexDocument]) -> int:
        """Append ``documents`` (durable and searchable when this returns)."""
        if not documents:
            return 0
        count = self._writer.append(documents)
        self._writer.refresh()
        updater = DictionaryUpdater(self.path)
        if updater.pending():
            updater.update()
        return count

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> NewsIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
