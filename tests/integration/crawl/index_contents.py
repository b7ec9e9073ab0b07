"""What a test crawl indexed, read back from its bundle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from indexer.core.bundle.reader import IndexBundleReader


def stored_summaries(bundle: str | Path) -> Iterator[dict[str, Any]]:
    """The stored summary of every doc_map entry of the bundle (empty ones left out)."""
    reader = IndexBundleReader(bundle)
    try:
        for part in reader.partitions:
            for index in range(part.doc_map.n):
                summary = reader.summary(reader.doc_id(part.number, index))
                if summary:
                    yield summary
    finally:
        reader.close()
