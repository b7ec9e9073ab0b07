"""Every stored document's summary in a bundle, read partition by partition.

Layer: ``indexer.core.bundle``. The scans that read a whole crawl at its end (the link records
of ``linkgraph.core.bundles``, the phrase counts of
:mod:`indexer.core.signals.phrase_counting`)
read tens of thousands of summaries, most of them a link document's few hundred bytes. Read
one by one (:meth:`.reader.IndexBundleReader.summary`: a lookup, a system call, zlib and the
json module each) that took 1.5 s of CPU for the default tier's 85,000 documents, twice at
every crawl's end. Here each partition's members are read from one map of its document file
(:meth:`..documents.store.BlobReader.documents_bytes`, every crc checked), inflated by ISA-L
and parsed by orjson, which gives what the json module gives for every JSON value but two: it
refuses ``NaN`` and infinities (older writers could store them) and reads integers past 64
bits as floats, so a summary it refuses, or one holding a float that large, is parsed by the
json module as before.

Contract: :func:`iter_member_summaries` yields, for every page, link and redirect document,
once per doc id (its copy in the newest partition holding it), exactly
``(doc_type, doc_id, reader.summary(doc_id))`` as
:meth:`.reader.IndexBundleReader.summary` gives it, and raises the same
:class:`..errors.CorruptIndexError` on a damaged document; :func:`partition_member_summaries`
does the same for one partition's ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from isal import isal_zlib

from ..errors import CorruptIndexError
from ..ids import DOC_ID_LEN, DOC_TYPE, DocType
from ..partition.doc_map import DocMap
from .reader import IndexBundleReader

_INT64 = float(2 ** 63)  # orjson reads an integer of this size or more as a float
BATCH = 4096  # members read from the map at a time (their bytes are held together)


def iter_member_summaries(reader: IndexBundleReader
                          ) -> Iterator[tuple[int, bytes, dict[str, Any] | None]]:
    """(doc type, doc id, summary) of every page, link and redirect document of ``reader``'s
    bundle, each doc id once: its copy in the newest partition holding it."""
    seen: set[bytes] = set()
    for part in reversed(reader.partitions):  # newest first: a re-stored doc_id is read once
        yield from _read(reader, part.number, _wanted(reader.doc_map(part.number), seen))


def partition_member_summaries(reader: IndexBundleReader, number: int
                               ) -> Iterator[tuple[int, bytes, dict[str, Any] | None]]:
    """(doc type, doc id, summary) of every page, link and redirect doc id stored in
    partition ``number``, each once, with the summary that partition holds for it (what
    :func:`iter_member_summaries` yields for the ids no newer partition holds)."""
    return _read(reader, number, _wanted(reader.doc_map(number), set()))


def _wanted(dm: DocMap, seen: set[bytes]) -> list[tuple[int, bytes]]:
    """(row, doc id) of the page, link and redirect ids of ``dm`` not in ``seen`` (added to
    it), each once: the row :meth:`.reader.IndexBundleReader.summary` reads, which is the doc
    map's lookup (the last copy of an id stored twice in one partition: rare, and then each
    id is looked up)."""
    rows = np.flatnonzero(dm.member_ids[:, DOC_TYPE] <= DocType.LOCATION).tolist()
    ids = dm.member_ids.tobytes()
    row_ids = [ids[row * DOC_ID_LEN:(row + 1) * DOC_ID_LEN] for row in rows]
    distinct = len(set(row_ids)) == len(row_ids)
    wanted: list[tuple[int, bytes]] = []
    for row, doc_id in zip(rows, row_ids, strict=True):
        if doc_id not in seen:
            seen.add(doc_id)
            wanted.append((row if distinct else _last_row(dm, doc_id, row), doc_id))
    return wanted


def _read(reader: IndexBundleReader, number: int, wanted: list[tuple[int, bytes]]
          ) -> Iterator[tuple[int, bytes, dict[str, Any] | None]]:
    """(doc type, doc id, summary) of the ``wanted`` rows of partition ``number``."""
    dm = reader.doc_map(number)
    blob = reader.blob(number)
    for first in range(0, len(wanted), BATCH):
        batch = wanted[first:first + BATCH]
        at = np.fromiter((row for row, _ in batch), dtype=np.int64, count=len(batch))
        datas = blob.documents_bytes(dm.summary_offset[at].tolist(), dm.blob_end[at].tolist(),
                                     dm.blob_crc[at].tolist())
        for (_, doc_id), doc_type, data, length in zip(
                batch, dm.member_ids[at, DOC_TYPE].tolist(), datas,
                dm.summary_length[at].tolist(), strict=True):
            yield doc_type, doc_id, _summary(blob.path, doc_id, data[:length])


def _last_row(dm: DocMap, doc_id: bytes, row: int) -> int:
    """The row :meth:`..partition.doc_map.DocMap.find_member` gives ``doc_id`` (``row`` is
    one of its rows)."""
    found = dm.find_member(doc_id)
    return row if found is None else int(found)


def _summary(path: Path, doc_id: bytes, member: bytes) -> dict[str, Any] | None:
    """The JSON of one gzip member, as :meth:`.reader.IndexBundleReader.summary` reads it."""
    try:
        raw = isal_zlib.decompress(member, wbits=31)
    except isal_zlib.error as exc:
        raise CorruptIndexError(path, f"bad gzip member: {exc}") from exc
    try:
        value = orjson.loads(raw)
        exact = not _past_64_bits(value)
    except orjson.JSONDecodeError:  # NaN, infinities
        exact = False
    if exact:
        return value  # type: ignore[no-any-return]
    try:
        return json.loads(raw)  # type: ignore[no-any-return]
    except ValueError as exc:
        raise CorruptIndexError(path, f"summary of {doc_id.hex()} is not JSON") from exc


def _past_64_bits(value: object) -> bool:
    """Whether ``value`` holds a float of 2 ** 63 or more (in magnitude): perhaps an integer
    that orjson could not keep exact. One loop over a stack (a page's summary holds a hundred
    link pairs and more: a call per value cost more than parsing it)."""
    stack = [value]
    pop, many = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            continue
        if kind is list:
            many(item)
        elif kind is dict:
            many(item.values())  # type: ignore[union-attr]
        elif kind is float and not -_INT64 < item < _INT64:  # type: ignore[operator]
            return True
    return False
