"""The index locator: which bundles a search reads, and the open readers kept between requests.

Layer: glue of the ``ranking`` app (no Django imports here; ``views.py`` passes
``settings.WORK_DIRECTORY``). Layout, one IndexDocumentBundle per queue server N and crawl
timestamp (:mod:`indexer.core.runtime.workdir`)::

    WORK_DIRECTORY/qs<N>/IndexData<timestamp>/

``its`` picks the crawl timestamp; by default the newest timestamp any queue server has.
:class:`ReaderPool` keeps one open :class:`IndexBundleReader` (and its :class:`LocalShard`) per
bundle and reopens it when the bundle's manifests change (new documents, merged partitions).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from indexer.core.bundle.layout import DOCUMENTS, POSITIONS_DOC_MAP
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.retired import RETIRED_FILE
from indexer.core.errors import CorruptIndexError
from indexer.core.runtime.workdir import bundle_timestamp, queue_server_number
from ranking.core.errors import NoIndexError, public_reason
from ranking.core.shard.local import LocalShard

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BundleLocation:
    server: int
    timestamp: int
    path: Path


def list_bundles(work_directory: str | os.PathLike[str]) -> list[BundleLocation]:
    """Every ``qs<N>/IndexData<timestamp>`` folder, by timestamp then server."""
    root = Path(work_directory)
    out: list[BundleLocation] = []
    if not root.is_dir():
        return out
    for qs in os.scandir(root):
        server = queue_server_number(qs.name)
        if server is None or not qs.is_dir():
            continue
        for entry in os.scandir(qs.path):
            timestamp = bundle_timestamp(entry.name)
            if timestamp is not None and entry.is_dir() and (Path(entry.path) / DOCUMENTS).is_dir():
                out.append(BundleLocation(server, timestamp, Path(entry.path)))
    out.sort(key=lambda b: (b.timestamp, b.server))
    return out


def locate_index(work_directory: str | os.PathLike[str],
                 its: int | None = None) -> tuple[int, list[BundleLocation]]:
    """(timestamp, bundles of that crawl, one per queue server). Raises NoIndexError."""
    bundles = list_bundles(work_directory)
    if not bundles:
        raise NoIndexError("no index has been built yet")
    if its is None:
        its = bundles[-1].timestamp
    chosen = [b for b in bundles if b.timestamp == its]
    if not chosen:
        known = ", ".join(str(t) for t in sorted({b.timestamp for b in bundles}))
        raise NoIndexError(f"there is no index for crawl {its} (known: {known})")
    return its, chosen


def bundle_signature(path: Path) -> tuple[int, ...]:
    """Modification times of the files that change when a bundle grows or merges, or when
    its retired set (:mod:`indexer.core.bundle.retired`: copies a recrawl replaced) changes."""
    stamps = []
    try:
        stamps.append(os.stat(path / RETIRED_FILE).st_mtime_ns)
    except FileNotFoundError:
        pass
    for name in (DOCUMENTS, POSITIONS_DOC_MAP, "dictionary"):
        folder = path / name
        try:
            for entry in os.scandir(folder):
                if entry.is_file():
                    stamps.append(entry.stat().st_mtime_ns)
                elif entry.is_dir() and name == POSITIONS_DOC_MAP:
                    try:
                        stamps.append(os.stat(Path(entry.path) / "MANIFEST").st_mtime_ns)
                    except FileNotFoundError:
                        continue
        except FileNotFoundError:
            continue
    return tuple(sorted(stamps))


class ReaderPool:
    """Open shards by bundle path; reopened when :func:`bundle_signature` changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[Path, tuple[tuple[int, ...], LocalShard]] = {}

    def shard(self, location: BundleLocation) -> LocalShard:
        signature = bundle_signature(location.path)
        with self._lock:
            hit = self._open.get(location.path)
            if hit is not None and hit[0] == signature:
                return hit[1]
            try:
                reader = IndexBundleReader(location.path)
            except (CorruptIndexError, FileNotFoundError, ValueError) as exc:
                raise NoIndexError(f"the index of crawl {location.timestamp} on queue server "
                                   f"{location.server} cannot be read: "
                                   f"{public_reason(exc)}") from exc
            if hit is not None:
                hit[1].reader.close()
            shard = LocalShard(reader, name=f"qs{location.server}")
            self._open[location.path] = (signature, shard)
            return shard

    def close(self) -> None:
        with self._lock:
            for _, shard in self._open.values():
                shard.reader.close()
            self._open.clear()
