"""The query side's view of an IndexDocumentBundle: statistics, postings cursors, documents.

Layer: ``indexer.core``. ``ranking.core`` builds its word iterators on :class:`PostingsCursor`
and scores with :meth:`IndexBundleReader.collection_stats`, :meth:`IndexBundleReader.term_stats`,
document lengths, region weights and :meth:`IndexBundleReader.doc_rank`.

A reader is a *snapshot*: it reads documents/pdb_parameters.txt, dictionary/MANIFEST and each
partition's MANIFEST once, and loads every file it will need from the not-yet-merged partitions
(the active one and closed ones the updater has not merged) at once, so writers and the updater
may replace or delete files afterwards. Files of merged partitions are opened at the snapshot and
read on first use (a re-order may delete them later, see :mod:`indexer.core.bundle.reorder`). :meth:`IndexBundleReader.refresh` takes a new snapshot. Every file is checked
(header, version, checksum) when loaded; damage raises :class:`CorruptIndexError` naming it.

Postings of a term come in (partition, doc_map index) order: partitions ascending, doc_map
order within a partition (Doc Rank order). Postings of doc_map entries the bundle's retired set
names (:mod:`indexer.core.bundle.retired`: copies a recrawl replaced, pages now gone or noindex) are
left out of every block a cursor hands out; the set is read with the snapshot, after the
partition MANIFESTs. A partition re-ordered by importance says so
(:meth:`IndexBundleReader.order_tag`); the query side then merges partitions by key.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..dictionary.tree import BPlusTree, PartitionInfo
from ..documents.store import BlobReader, PartitionState, gunzip, read_parameters
from ..errors import CorruptIndexError
from ..files.codes import CodeError, IntArray
from ..files.packed_columns import unpack_columns
from ..files.packed_table import RecordFormatError
from ..files.storage import read_framed, unframe
from ..ids import term_id
from ..partition.block_maxima import BlockMaxima
from ..partition.build import LAST_ENTRIES_TOOL
from ..partition.doc_map import DocMap, DocMapFormatError
from ..partition.grouping import doc_rank
from ..partition.positions import decode_positions
from ..partition.postings import PostingBlock, PostingListReader
from ..partition.url_columns import UrlColumns
from .layout import (
    BLOCK_MAXIMA,
    DICTIONARY,
    DOCUMENTS,
    URL_COLUMNS,
    partition_dir,
    read_partition_manifest,
)
from .reorder import ORDER_KEY
from .retired import read_retired

logger = logging.getLogger(__name__)
_RETRIES = 8


@dataclass(frozen=True, slots=True)
class CollectionStats:
    """N (doc_map entries: searchable groups), total and average document length."""

    documents: int
    total_length: int
    average_length: float
    partition_sizes: tuple[int, ...]
    stored_documents: int  # documents stored (pages + links), searchable or not yet


@dataclass(frozen=True, slots=True)
class TermStats:
    """Documents with the term and total occurrences l_t, over every searchable partition."""

    docs: int
    occurrences: int


class _Partition:
    """One partition's derived files.

    ``unmerged``: the dictionary does not hold the partition's terms yet (the active partition,
    or one closed since the last merge), so its own term table (``last_entries``) is read, on
    the first term looked up (:attr:`terms`). Postings, positions and that table are read on
    first use from files opened at the snapshot (:meth:`open_files`), so a re-order or a
    refresh that deletes them afterwards (:mod:`indexer.core.bundle.reorder`) does not take them
    from this snapshot; a reader that never looks a term up (link analysis, phrase counting,
    counting documents) never reads them."""

    __slots__ = ("number", "directory", "files", "doc_map", "unmerged", "order", "live",
                 "_terms", "_postings", "_positions", "_fds", "url_columns", "maxima")

    def __init__(self, number: int, directory: Path, files: dict[str, str], doc_map: DocMap,
                 unmerged: bool, order: str | None = None) -> None:
        self.number = number
        self.order = order  # the MANIFEST's importance tag (None: crawl order)
        self.directory = directory
        self.files = files
        self.doc_map = doc_map
        self.unmerged = unmerged
        self.live: np.ndarray | None = None  # doc_map entries not retired (None: all)
        self._terms: dict[bytes, tuple[int, int, int, int]] | None = None
        self._postings: bytes | None = None
        self._positions: bytes | None = None
        self._fds: dict[str, int] = {}
        self.url_columns: UrlColumns | None | bool = False  # False: not read yet
        self.maxima: BlockMaxima | None | bool = False  # False: not read yet

    @property
    def terms(self) -> dict[bytes, tuple[int, int, int, int]] | None:
        """An unmerged partition's term table (term_id -> docs, occurrences, postings offset,
        postings length); None for a merged one (the dictionary holds its terms)."""
        if self.unmerged and self._terms is None:
            self._terms = last_entries_table(self.file("last_entries"),
                                             self._read("last_entries"))
        return self._terms

    def open_files(self) -> None:
        kinds = ("postings", "positions", "last_entries") if self.unmerged else (
            "postings", "positions")
        for optional in (URL_COLUMNS, BLOCK_MAXIMA):  # opened with the snapshot: a
            if optional in self.files:                # re-order deletes them
                kinds = (*kinds, optional)
        for kind in kinds:
            self._fds[kind] = os.open(self.file(kind), os.O_RDONLY)

    def _read(self, kind: str) -> bytes:
        fd = self._fds.pop(kind, -1)
        if fd < 0:
            return read_framed(self.file(kind), kind)
        try:
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read()
        finally:
            os.close(fd)
        return unframe(self.file(kind), data, kind)

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def postings_payload(self) -> bytes:
        if self._postings is None:
            self._postings = self._read("postings")
        return self._postings

    def positions_payload(self) -> bytes:
        if self._positions is None:
            self._positions = self._read("positions")
        return self._positions

    def file(self, kind: str) -> Path:
        return self.directory / self.files[kind]

    def block_maxima(self) -> BlockMaxima | None:
        """The partition's block maxima (:mod:`indexer.core.partition.block_maxima`), read
        once; None when it has none (made before them) or they do not decode."""
        if self.maxima is False:
            self.maxima = None
            if BLOCK_MAXIMA in self.files:
                try:
                    self.maxima = BlockMaxima.decode(self._read(BLOCK_MAXIMA))
                except (OSError, ValueError, CorruptIndexError) as exc:
                    logger.warning("partition %d: block maxima not read (%s)", self.number,
                                   exc)
        return self.maxima if isinstance(self.maxima, BlockMaxima) else None


class _SnapshotChanged(Exception):
    """A partition MANIFEST changed while the snapshot was taken."""


def load_last_entries(path: Path) -> dict[bytes, tuple[int, int, int, int]]:
    """term_id -> (docs, occurrences, postings offset, postings length)."""
    return last_entries_table(path, read_framed(path, "last_entries"))


def last_entries_table(path: Path, payload: bytes) -> dict[bytes, tuple[int, int, int, int]]:
    """The table of a last_entries file's ``payload`` (read from ``path``)."""
    try:
        keys, ints, _, _ = unpack_columns(LAST_ENTRIES_TOOL, payload)
    except RecordFormatError as exc:
        raise CorruptIndexError(path, str(exc)) from exc
    return dict(zip(keys, map(tuple, ints[:, :4].tolist()), strict=True))


def _load_doc_map(path: Path) -> DocMap:
    try:
        return DocMap(read_framed(path, "doc_map"))
    except DocMapFormatError as exc:
        raise CorruptIndexError(path, str(exc)) from exc


class PostingsCursor:
    """One term's postings over all partitions, in (partition, doc_map index) order.

    ``next_block()`` returns the next :class:`PostingBlock` (numpy arrays), ``skip_to``
    jumps to the first block holding a posting at or after (partition, index) and trims it,
    ``positions(block)`` decodes the block's positions. ``None`` means exhausted.
    """

    def __init__(self, reader: IndexBundleReader, sources: list[tuple[_Partition, int, int]],
                 stats: TermStats) -> None:
        self._reader = reader
        self._sources = sources
        self._current: PostingListReader | None = None
        self._source = -1
        self.stats = stats

    @property
    def docs(self) -> int:
        return self.stats.docs

    def _open_next(self) -> bool:
        self._source += 1
        if self._source >= len(self._sources):
            self._current = None
            return False
        part, offset, length = self._sources[self._source]
        try:
            maxima = part.block_maxima()
            self._current = PostingListReader(
                part.postings_payload(), offset, length, part.number,
                blocks=maxima.of_list(offset) if maxima is not None else None)
        except CodeError as exc:
            raise CorruptIndexError(part.file("postings"), f"list at {offset}: {exc}") from exc
        return True

    def _wrap(self, call: Any) -> PostingBlock | None:
        part = self._sources[self._source][0]
        try:
            block = call()
        except CodeError as exc:
            raise CorruptIndexError(part.file("postings"), str(exc)) from exc
        if block is not None and int(block.doc_index[-1]) >= part.doc_map.n:
            raise CorruptIndexError(part.file("postings"), "posting beyond the doc_map")
        return block

    def _live(self, block: PostingBlock) -> PostingBlock | None:
        """``block`` without the postings of retired doc_map entries (None: all were)."""
        live = self._sources[self._source][0].live
        if live is None:
            return block
        keep = live[block.doc_index]
        if keep.all():
            return block
        if not keep.any():
            return None
        return PostingBlock(block.partition, block.doc_index[keep], block.frequency[keep],
                            block.pos_offset[keep], block.pos_length[keep], block.rice_k)

    def next_block(self) -> PostingBlock | None:
        while True:
            if self._current is None and not self._open_next():
                return None
            assert self._current is not None
            block = self._wrap(self._current.next_block)
            if block is None:
                self._current = None
                continue
            block = self._live(block)
            if block is not None:
                return block

    def skip_to(self, partition: int, index: int) -> PostingBlock | None:
        """The block with the first posting >= (partition, index), trimmed to start there."""
        while True:
            if self._current is None and not self._open_next():
                return None
            assert self._current is not None
            if self._current.partition < partition:
                self._current = None
                continue
            target = index if self._current.partition == partition else 0
            block = self._wrap(lambda: self._current.skip_to(target))  # noqa: B023
            if block is None:
                self._current = None
                continue
            cut = int(np.searchsorted(block.doc_index, target))
            if cut:
                block = PostingBlock(block.partition, block.doc_index[cut:],
                                     block.frequency[cut:], block.pos_offset[cut:],
                                     block.pos_length[cut:], block.rice_k)
            live = self._live(block)
            return live if live is not None else self.next_block()

    def more_in_partition(self) -> bool:
        """Whether the partition of the last block returned has postings not returned yet
        (blocks skipped by ``skip_to`` count as returned): a query bounding its reads per
        partition tells from it whether the bound left anything unread."""
        current = self._current
        return current is not None and current._remaining > 0

    def more(self) -> bool:
        """Whether postings not returned yet remain, in this partition or a later one."""
        return self.more_in_partition() or self._source + 1 < len(self._sources)

    def positions(self, block: PostingBlock) -> tuple[IntArray, IntArray]:
        """All positions of the block's postings, posting after posting, and the counts."""
        part = self._reader._partition(block.partition)
        try:
            return decode_positions(part.positions_payload(), block.pos_offset,
                                    block.frequency, block.pos_length, block.rice_k)
        except CodeError as exc:
            raise CorruptIndexError(part.file("positions"), str(exc)) from exc

    def __iter__(self) -> Iterator[PostingBlock]:
        while (block := self.next_block()) is not None:
            yield block


class IndexBundleReader:
    """Read-only snapshot of an IndexDocumentBundle folder."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._blobs: dict[int, BlobReader] = {}
        self._open()

    def _open(self) -> None:
        last: Exception | None = None
        for _ in range(_RETRIES):
            try:
                self._snapshot()
                return
            except (FileNotFoundError, _SnapshotChanged) as exc:
                # a file replaced between two reads, or a MANIFEST switched: retry
                last = exc
        raise CorruptIndexError(self.path, f"could not take a consistent snapshot: {last}")

    def _manifests(self) -> dict[int, dict[str, Any] | None]:
        return {state.number: read_partition_manifest(self.path, state.number)
                for state in self.document_partitions}

    def _snapshot(self) -> None:
        """Partition MANIFESTs, then the dictionary, then the MANIFESTs again: a re-order
        (:mod:`indexer.core.bundle.reorder`) replaces a merged partition's MANIFEST and then its
        dictionary records, so MANIFESTs unchanged across the dictionary read mean the
        dictionary's records describe the files those MANIFESTs name."""
        params = read_parameters(self.path / DOCUMENTS)
        self.parameters = params
        self.document_partitions: list[PartitionState] = params["partitions"]
        manifests = self._manifests()
        self.dictionary = BPlusTree(self.path / DICTIONARY)
        partitions: list[_Partition] = []
        try:
            if self._manifests() != manifests:
                raise _SnapshotChanged("a partition MANIFEST changed")
            next_partition = self.dictionary.next_partition
            for number, manifest in manifests.items():
                if manifest is None:
                    continue
                pdir = partition_dir(self.path, number)
                files = manifest["files"]
                doc_map = _load_doc_map(pdir / files["doc_map"])
                unmerged = number >= next_partition or manifest.get("merged") is False
                tag = manifest.get(ORDER_KEY)
                part = _Partition(number, pdir, files, doc_map, unmerged,
                                  str(tag) if tag is not None else None)
                partitions.append(part)
                part.open_files()
            retired = read_retired(self.path)  # after the MANIFESTs: see the module
        except BaseException:
            for part in partitions:
                part.close()
            self.dictionary.close()
            raise
        self.partitions = partitions
        self.retired = retired
        if retired is not None:
            for part in partitions:
                part.live = retired.live(part.doc_map.doc_ids)
        self._by_number = {p.number: p for p in self.partitions}
        self._sizes = [p.doc_map.n for p in self.partitions]
        self._size_index = {p.number: i for i, p in enumerate(self.partitions)}

    def refresh(self) -> None:
        """Take a new snapshot (new documents, merged partitions)."""
        self.close()
        self._open()

    def close(self) -> None:
        for blob in self._blobs.values():
            blob.close()
        self._blobs.clear()
        for part in self.partitions:
            part.close()
        self.dictionary.close()

    def __enter__(self) -> IndexBundleReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _partition(self, number: int) -> _Partition:
        return self._by_number[number]

    # -- statistics -------------------------------------------------------------------------

    def collection_stats(self) -> CollectionStats:
        total = int(sum(int(p.doc_map.length.sum()) for p in self.partitions))
        n = int(sum(self._sizes))
        stored = int(sum(s.docs for s in self.document_partitions))
        return CollectionStats(n, total, total / n if n else 0.0, tuple(self._sizes), stored)

    def term_info(self, term: str | bytes) -> list[PartitionInfo]:
        """The term's per-partition records over every searchable partition, ascending."""
        key = term if isinstance(term, bytes) else term_id(term)
        out: list[PartitionInfo] = []
        merged = self.dictionary.lookup(key) or ()
        for record in merged:
            if record[0] in self._by_number and not self._by_number[record[0]].unmerged:
                out.append(PartitionInfo(*record))
        for part in self.partitions:
            if part.unmerged:
                hit = part.terms.get(key)  # type: ignore[union-attr]
                if hit is not None:
                    out.append(PartitionInfo(part.number, *hit))
        out.sort(key=lambda r: r.partition)
        return out

    def term_stats(self, term: str | bytes) -> TermStats:
        info = self.term_info(term)
        return TermStats(sum(r.docs for r in info), sum(r.occurrences for r in info))

    def postings(self, term: str | bytes) -> PostingsCursor:
        info = self.term_info(term)
        sources = [(self._by_number[r.partition], r.offset, r.length) for r in info]
        return PostingsCursor(self, sources, TermStats(sum(r.docs for r in info),
                                                       sum(r.occurrences for r in info)))

    # -- documents --------------------------------------------------------------------------

    def doc_rank(self, partition: int, index: Any) -> np.ndarray:
        """Doc Rank of doc_map entries ``index`` (scalar or array) of ``partition`` in the
        seed's (partition, index) order; the query side uses
        :class:`~indexer.core.partition.grouping.ImportanceRanks` once partitions are re-ordered."""
        return doc_rank(self._sizes, self._size_index[partition], index)

    def order_tag(self, partition: int) -> str | None:
        """The tag of the importance ``partition`` was re-ordered by (its MANIFEST's
        ``order``, written by :mod:`indexer.core.bundle.reorder`): its doc_map's score column then
        holds the importance key of :func:`indexer.core.partition.grouping.importance_order`. None: the
        partition is in crawl order (the active one, or no link analysis yet)."""
        return self._by_number[partition].order

    def doc_map(self, partition: int) -> DocMap:
        return self._by_number[partition].doc_map

    def block_maxima(self, partition: int) -> BlockMaxima | None:
        """``partition``'s block maxima (:meth:`_Partition.block_maxima`)."""
        return self._by_number[partition].block_maxima()

    def url_columns(self, partition: int) -> UrlColumns | None:
        """The url columns of ``partition``'s doc_map entries
        (:mod:`indexer.core.partition.url_columns`), read once; None when the partition has
        none (made before them) or they do not fit its doc_map (callers then read the urls
        from the summaries, :meth:`summary_head`)."""
        part = self._by_number[partition]
        if part.url_columns is False:
            part.url_columns = None
            if URL_COLUMNS in part.files:
                try:
                    cols = UrlColumns.decode(part._read(URL_COLUMNS))
                    part.url_columns = cols if len(cols) == part.doc_map.n else None
                except (OSError, ValueError, CorruptIndexError) as exc:
                    logger.warning("partition %d: url columns not read (%s)", partition, exc)
        return part.url_columns if isinstance(part.url_columns, UrlColumns) else None

    def doc_id(self, partition: int, index: int) -> bytes:
        return self.doc_map(partition).doc_id(index)

    def document_length(self, partition: int, index: int) -> int:
        return int(self.doc_map(partition).length[index])

    def region_weights(self, partition: int, index: int) -> list[tuple[int, float]]:
        return self._psl(partition, index, "region_weights")

    def classifier_scores(self, partition: int, index: int) -> list[float]:
        return self._psl(partition, index, "classifier_scores")

    def _psl(self, partition: int, index: int, what: str) -> Any:
        part = self._by_number[partition]
        try:
            return getattr(part.doc_map, what)(index)
        except DocMapFormatError as exc:
            raise CorruptIndexError(part.file("doc_map"), str(exc)) from exc

    def _locate(self, doc_id: bytes) -> tuple[_Partition, int] | None:
        for part in reversed(self.partitions):
            row = part.doc_map.find_member(doc_id)
            if row is not None:
                return part, row
        return None

    def _member_bytes(self, part: _Partition, row: int) -> bytes:
        dm = part.doc_map
        return self.blob(part.number).document_bytes(
            int(dm.summary_offset[row]), int(dm.blob_end[row]), int(dm.blob_crc[row]))

    def summary(self, doc_id: bytes) -> dict[str, Any] | None:
        """The stored summary of ``doc_id`` (newest partition first), or None."""
        found = self._locate(doc_id)
        if found is None:
            return None
        part, row = found
        data = self._member_bytes(part, row)
        path = self._blobs[part.number].path
        raw = gunzip(path, data[:int(part.doc_map.summary_length[row])])
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise CorruptIndexError(path, f"summary of {doc_id.hex()} is not JSON") from exc

    def summary_gzip(self, doc_id: bytes) -> tuple[Path, bytes] | None:
        """The stored gzip member of ``doc_id``'s summary and the file it is in, or None: for
        readers that inflate only the part they need (the search's summaries stop before a
        page's whole text, ``ranking.core.display.summary``). Only the member's bytes are read, not
        the cached page stored after it, so the blob's checksum (which covers both) is not
        checked, as for :meth:`summary_head`: a damaged member fails to inflate or to parse."""
        found = self._locate(doc_id)
        if found is None:
            return None
        part, row = found
        dm = part.doc_map
        start = int(dm.summary_offset[row])
        blob = self.blob(part.number)
        return blob.path, blob.document_bytes(start, start + int(dm.summary_length[row]), None)

    def blob(self, number: int) -> BlobReader:
        """The reader of partition ``number``'s document file (opened once, kept)."""
        blob = self._blobs.get(number)
        if blob is None:
            blob = self._blobs[number] = BlobReader(
                self.path / DOCUMENTS / f"partition_{number}.txt.gz")
        return blob

    def summary_head(self, partition: int, index: int, size: int = 2048) -> tuple[str, str]:
        """(url, title) of doc_map entry ``index``'s representative, read from the first
        ``size`` bytes of its stored summary (summaries are JSON objects that start with the
        url and the title): scoring needs them for every candidate, and a whole summary (the
        page text and its links) is much larger. Falls back to the whole summary when the head
        does not hold both."""
        part = self._by_number[partition]
        return self._head(part, int(part.doc_map.ix_index[index]), size)

    def summary_head_of(self, doc_id: bytes, size: int = 2048) -> tuple[str, str] | None:
        """(url, title) of the stored summary of ``doc_id`` (see :meth:`summary_head`)."""
        found = self._locate(doc_id)
        return None if found is None else self._head(found[0], found[1], size)

    def _head(self, part: _Partition, row: int, size: int) -> tuple[str, str]:
        dm = part.doc_map
        start = int(dm.summary_offset[row])
        length = int(dm.summary_length[row])
        data = self.blob(part.number).document_bytes(start, start + min(size, length), None)
        try:
            text = zlib.decompressobj(31).decompress(data, 8 * size).decode("utf-8", "ignore")
            decoder = json.JSONDecoder()
            if text.startswith('{"url":'):
                url, end = decoder.raw_decode(text, 7)
                if text.startswith(',"title":', end):
                    title, _ = decoder.raw_decode(text, end + 9)
                    return str(url), str(title)
        except (zlib.error, ValueError):
            pass
        summary = self.summary(dm.member_ids[row].tobytes()) or {}
        return str(summary.get("url", "")), str(summary.get("title", ""))

    def cached_page(self, doc_id: bytes) -> bytes | None:
        found = self._locate(doc_id)
        if found is None:
            return None
        part, row = found
        dm = part.doc_map
        length = int(dm.cache_length[row])
        if not length:
            return None
        data = self._member_bytes(part, row)
        start = int(dm.cache_offset[row] - dm.summary_offset[row])
        return gunzip(self._blobs[part.number].path, data[start:start + length])

