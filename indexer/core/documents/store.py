"""documents/: the PartitionDocumentBundle - partitions of stored summaries and cached pages.

Layer: ``indexer.core``. Appended to by :class:`indexer.core.bundle.writer.IndexBundleWriter`; read by
:mod:`indexer.core.bundle.reader` (summaries, cached pages) and :mod:`indexer.core.bundle.verify`.

Files::

    documents/pdb_parameters.txt     framed text (JSON): compression, record format, partition
                                     limits, ACTIVE_COUNT, VISITED_URLS_COUNT, the active
                                     partition and the committed size of every partition
    documents/partition_N.ix         append-only log of records (the record codec, see
                                     ``IX_TOOL``), one per document, in append order
    documents/partition_N.txt.gz     append-only log: per document its gzip-compressed summary
                                     (JSON), its gzip-compressed cached page (if any) and its
                                     zlib-compressed index blob (see doc_index), back to back

An ``.ix`` record is (doc_id, summary offset, summary length, cache offset, cache length,
index offset, index length, record crc32, blob crc32): ``record crc32`` covers the doc_id,
the six numbers and the blob crc32; ``blob crc32`` covers the document's bytes in ``.txt.gz``.

Durability: a batch is appended to both logs, both are fsynced, then pdb_parameters.txt is
replaced atomically with the new committed sizes. Bytes past a committed size are a crashed
batch and are truncated when the writer reopens; a batch is acknowledged only after the
parameters file names it.

Partition size: a partition closes when another document would take it past
``max_partition_docs`` documents or ``max_partition_bytes`` bytes of ``.txt.gz`` (the seed's
rule: the lesser of what fits in 2 GB and ``8 * GB of RAM * 10,000`` documents).
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from isal.isal_zlib import crc32

from ..errors import CorruptIndexError
from ..files.packed_columns import pack_columns, unpack_columns
from ..files.packed_table import PackedTableTool, RecordFormatError, split_records
from ..files.storage import HEADER_SIZE, AppendLog, check_log_header, read_text, write_text

logger = logging.getLogger(__name__)

PARAMETERS_FILE = "pdb_parameters.txt"
PARAMETERS_KIND = "pdb_parameters"
IX_KIND = "ix"
BLOB_KIND = "txtgz"
IX_TOOL = PackedTableTool.of(
    "doc_id:BLOB summary_offset:INT summary_length:INT cache_offset:INT cache_length:INT "
    "index_offset:INT index_length:INT record_crc:INT blob_crc:INT")
_NUMBERS = struct.Struct(">6QI")


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """Where one document's bytes are in its partition's ``.txt.gz``."""

    doc_id: bytes
    summary_offset: int
    summary_length: int
    cache_offset: int
    cache_length: int
    index_offset: int
    index_length: int
    blob_crc: int

    @property
    def start(self) -> int:
        return self.summary_offset

    @property
    def end(self) -> int:
        return self.index_offset + self.index_length


@dataclass(frozen=True, slots=True)
class PartitionState:
    number: int
    docs: int
    ix_bytes: int
    blob_bytes: int


def partition_paths(directory: Path, number: int) -> tuple[Path, Path]:
    return directory / f"partition_{number}.ix", directory / f"partition_{number}.txt.gz"


def _record_crc(doc_id: bytes, numbers: Sequence[int], blob_crc: int) -> int:
    return zlib.crc32(doc_id + _NUMBERS.pack(*numbers, blob_crc))


def read_parameters(directory: Path) -> dict:
    path = directory / PARAMETERS_FILE
    text = read_text(path, PARAMETERS_KIND)
    try:
        params = json.loads(text)
        params["partitions"] = [PartitionState(*row) for row in params["partitions"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(path, f"malformed parameters: {exc}") from exc
    return params


class PartitionDocumentBundle:
    """The documents/ folder. Writable instances are owned by one writer (the bundle lock)."""

    def __init__(self, directory: Path, *, max_docs: int = 50_000,
                 max_bytes: int = 2 * 1024 ** 3, writable: bool = False) -> None:
        self.directory = directory
        self.writable = writable
        params_path = directory / PARAMETERS_FILE
        if writable and not params_path.exists():
            directory.mkdir(parents=True, exist_ok=True)
            self.params = {
                "compression": "gzip", "index_blob_compression": "zlib",
                "record_format": IX_TOOL.describe(), "max_partition_bytes": max_bytes,
                "max_partition_docs": max_docs, "active_count": 0, "visited_urls_count": 0,
                "active_partition": 0, "partitions": [PartitionState(0, 0, 0, 0)],
            }
        else:
            self.params = read_parameters(directory)
        self._logs: tuple[AppendLog, AppendLog] | None = None
        if writable:
            self.params["max_partition_bytes"] = max_bytes
            self.params["max_partition_docs"] = max_docs
            self._open_active()
            self.commit()

    # -- state ------------------------------------------------------------------------------

    @property
    def partitions(self) -> list[PartitionState]:
        return self.params["partitions"]

    @property
    def active(self) -> int:
        return int(self.params["active_partition"])

    @property
    def active_state(self) -> PartitionState:
        return self.partitions[self.active]

    # -- writing ----------------------------------------------------------------------------

    def _open_active(self) -> None:
        state = self.active_state
        ix_path, blob_path = partition_paths(self.directory, state.number)
        # the new logs' directory entries become durable with the parameters file that
        # names them (commit replaces it in the same directory and fsyncs the directory)
        self._logs = (AppendLog(ix_path, IX_KIND, state.ix_bytes or None, sync_dir=False),
                      AppendLog(blob_path, BLOB_KIND, state.blob_bytes or None, sync_dir=False))
        if not state.ix_bytes:
            self.partitions[self.active] = PartitionState(state.number, 0, HEADER_SIZE,
                                                          HEADER_SIZE)

    def add(self, doc_ids: Sequence[bytes], summaries: Sequence[bytes], caches: Sequence[bytes],
            index_blobs: Sequence[bytes], links: int) -> np.ndarray:
        """Append documents (their doc_ids, gzipped summaries and cached pages, index blobs) to
        the active partition (no rollover here: the writer applies the limits); ``links`` of
        them are link documents. Returns one row per document: summary offset and length,
        cache offset and length, end and crc32 of its bytes. Not durable until
        :meth:`commit`. The ``.ix`` records are packed column-wise (the record codec's bytes)."""
        assert self._logs is not None
        ix_log, blob_log = self._logs
        n = len(doc_ids)
        if not n:
            return np.zeros((0, 6), dtype=np.int64)
        data = [s + c + b for s, c, b in zip(summaries, caches, index_blobs, strict=True)]
        crcs = list(map(zlib.crc32, data))
        s_len = np.fromiter(map(len, summaries), dtype=np.int64, count=n)
        c_len = np.fromiter(map(len, caches), dtype=np.int64, count=n)
        i_len = np.fromiter(map(len, index_blobs), dtype=np.int64, count=n)
        total = s_len + c_len + i_len
        s_off = blob_log.size + np.cumsum(total) - total
        c_off = s_off + s_len
        i_off = c_off + c_len
        numbers = np.column_stack([s_off, s_len, c_off, c_len, i_off, i_len])
        rows = numbers.tolist()
        rec_crcs = [_record_crc(doc_id, row, crc)
                    for doc_id, row, crc in zip(doc_ids, rows, crcs, strict=True)]
        blob_crc = np.array(crcs, dtype=np.int64)
        records = pack_columns(IX_TOOL, doc_ids, np.column_stack(
            [numbers, np.array(rec_crcs, dtype=np.int64), blob_crc]))
        blob_log.append(b"".join(data))
        ix_log.append(records)
        state = self.active_state
        self.partitions[self.active] = PartitionState(
            state.number, state.docs + n, ix_log.size, blob_log.size)
        self.params["active_count"] += n - links
        self.params["visited_urls_count"] += links
        return np.column_stack([s_off, s_len, c_off, c_len, i_off + i_len, blob_crc])

    def commit(self) -> None:
        """Make everything added durable: fsync both logs, then replace the parameters file."""
        if self._logs is not None:
            AppendLog.sync_all(list(self._logs))
        params = dict(self.params)
        params["partitions"] = [[p.number, p.docs, p.ix_bytes, p.blob_bytes]
                                for p in self.partitions]
        write_text(self.directory / PARAMETERS_FILE, PARAMETERS_KIND,
                   json.dumps(params, sort_keys=True, indent=1))

    def start_partition(self) -> int:
        """Close the active partition's files and start the next one (committed)."""
        self.close_files()
        number = self.active + 1
        self.partitions.append(PartitionState(number, 0, 0, 0))
        self.params["active_partition"] = number
        self._open_active()
        self.commit()
        return number

    def discard_uncommitted(self) -> None:
        """Close the files and cut the active partition's logs back to the sizes the
        parameters file on disk commits (after a batch failed half-way: a full disk). The
        next writer would truncate them too; doing it now gives the space back at once."""
        self.close_files()
        try:
            committed = read_parameters(self.directory)
        except FileNotFoundError:
            return
        state = committed["partitions"][int(committed["active_partition"])]
        for path, size in zip(partition_paths(self.directory, state.number),
                              (state.ix_bytes, state.blob_bytes), strict=True):
            try:
                if path.stat().st_size > size:
                    os.truncate(path, size)
            except FileNotFoundError:
                pass

    def close_files(self) -> None:
        if self._logs is not None:
            for log in self._logs:
                log.close()
            self._logs = None

    # -- reading ----------------------------------------------------------------------------

    def read_records(self, number: int) -> list[StoredDocument]:
        """All committed records of partition ``number``, each checked."""
        state = self.partitions[number]
        ix_path, _ = partition_paths(self.directory, number)
        if state.ix_bytes == 0:
            return []
        try:
            with open(ix_path, "rb") as handle:
                data = handle.read(state.ix_bytes)
        except OSError as exc:
            raise CorruptIndexError(ix_path, f"unreadable: {exc}") from exc
        if len(data) < state.ix_bytes:
            raise CorruptIndexError(ix_path, f"file is {len(data)} bytes, committed "
                                             f"{state.ix_bytes}")
        check_log_header(ix_path, data, IX_KIND)
        body = data[HEADER_SIZE:]
        if body and body[-1] != 0xFF:
            raise CorruptIndexError(ix_path, "last committed record is not terminated")
        try:
            keys, ints, _, _ = unpack_columns(IX_TOOL, body)
        except RecordFormatError:
            keys = None
        out = (_checked_records(keys, ints, state.blob_bytes)
               if keys is not None else None)
        if out is None:  # damaged: one record at a time names the first bad one
            out = _records_one_by_one(body, ix_path, state.blob_bytes)
        if len(out) != state.docs:
            raise CorruptIndexError(ix_path, f"{len(out)} records, parameters say {state.docs}")
        return out

    def blob_path(self, number: int) -> Path:
        return partition_paths(self.directory, number)[1]


# a record's checksummed bytes (:func:`_record_crc`): its doc id, six numbers and the blob crc
_CHECKED = np.dtype([("doc_id", "V24"), ("numbers", ">u8", 6), ("blob_crc", ">u4")])


def _checked_records(keys: list[bytes], ints: np.ndarray, blob_bytes: int
                     ) -> list[StoredDocument] | None:
    """The records of a table decoded column-wise, each checked as
    :func:`_records_one_by_one` checks it; None when one is not right (that function then
    names it)."""
    n = len(keys)
    if n == 0:
        return []
    numbers, rec_crcs, blob_crcs = ints[:, :6], ints[:, 6], ints[:, 7]
    if (any(len(key) != 24 for key in keys) or int(numbers.min()) < 0
            or int(blob_crcs.min()) < 0 or int(blob_crcs.max()) > 0xFFFFFFFF
            or np.any(numbers[:, 4] + numbers[:, 5] > blob_bytes)
            or np.any(numbers[:, 0] < HEADER_SIZE)):
        return None
    checked = np.empty(n, dtype=_CHECKED)
    checked["doc_id"] = keys
    checked["numbers"] = numbers
    checked["blob_crc"] = blob_crcs
    raw = memoryview(checked.tobytes())
    size = _CHECKED.itemsize
    crcs = [zlib.crc32(raw[i:i + size]) for i in range(0, n * size, size)]
    if crcs != rec_crcs.tolist():
        return None
    return [StoredDocument(key, *row) for key, row in
            zip(keys, np.column_stack([numbers, blob_crcs]).tolist(), strict=True)]


def _records_one_by_one(body: bytes, ix_path: Path, blob_bytes: int) -> list[StoredDocument]:
    """The records of a ``.ix`` table decoded and checked one at a time: the first damaged
    record is named in the :class:`CorruptIndexError` raised."""
    out = []
    for i, record in enumerate(split_records(body)):
        try:
            values, _ = IX_TOOL.unpack(record)
        except RecordFormatError as exc:
            raise CorruptIndexError(ix_path, f"record {i}: {exc}") from exc
        doc_id, *numbers, rec_crc, blob_crc = values
        try:
            crc = _record_crc(doc_id, numbers, blob_crc)
        except struct.error:  # a negative number or a crc past 32 bits
            crc = None
        if len(doc_id) != 24 or crc != rec_crc:
            raise CorruptIndexError(ix_path, f"record {i}: checksum mismatch")
        if numbers[4] + numbers[5] > blob_bytes or numbers[0] < HEADER_SIZE:
            raise CorruptIndexError(ix_path, f"record {i}: offsets outside the partition")
        out.append(StoredDocument(doc_id, *numbers, blob_crc))
    return out


class BlobReader:
    """Reads and checks one document's bytes from a ``.txt.gz`` partition file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDONLY)
        check_log_header(path, os.pread(self._fd, HEADER_SIZE, 0), BLOB_KIND)

    def document_bytes(self, start: int, end: int, crc: int | None) -> bytes:
        data = os.pread(self._fd, end - start, start)
        if len(data) != end - start:
            raise CorruptIndexError(self.path, f"document at {start} is truncated")
        if crc is not None and zlib.crc32(data) != crc:
            raise CorruptIndexError(self.path, f"document at {start}: checksum mismatch")
        return data

    def documents_bytes(self, starts: Sequence[int], ends: Sequence[int],
                        crcs: Sequence[int]) -> list[bytes]:
        """:meth:`document_bytes` of many documents (each checked against its crc), from
        one read-only map of the file: the scans of a whole partition read tens of
        thousands of small documents, for which a system call each costs more than the
        copy. Documents past the end of the map (appended after it was made) are read as
        :meth:`document_bytes` reads them."""
        with mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ) as view:
            size = len(view)
            out = []
            for start, end, crc in zip(starts, ends, crcs, strict=True):
                if end > size:
                    out.append(self.document_bytes(start, end, crc))
                    continue
                data = view[start:end]
                if crc32(data) != crc:
                    raise CorruptIndexError(self.path, f"document at {start}: checksum mismatch")
                out.append(data)
        return out

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def gunzip(path: Path, data: bytes) -> bytes:
    try:
        return zlib.decompress(data, wbits=31)
    except zlib.error as exc:
        raise CorruptIndexError(path, f"bad gzip member: {exc}") from exc
