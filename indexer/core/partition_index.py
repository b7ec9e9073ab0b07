"""Build a partition's derived files (doc_map, positions, postings, last_entries) in one pass.

Layer: ``indexer.core``. Called by :class:`indexer.core.bundle.IndexBundleWriter` to refresh the
active partition and to close it. Everything per posting or per position is a numpy array
operation; Python loops run per document and per term only.

Also defines the *document index blob*: each document's terms, positions, meta words, region
weights and classifier scores, stored zlib-compressed next to its summary in
``partition_N.txt.gz``, so the active partition can be rebuilt after a crash::

    u32 length, u32 nterms, u32 nmeta, u32 nregions, u32 nclassifier, u8 wide
    u32 byte length of the terms               then the terms, UTF-8, each followed by NUL
    u32 byte length of the meta words          then the meta words, each followed by NUL
    nterms x N frequency                       then sum(frequency) x N positions
                                               (N = u16 when wide is 0, else u32)
    nregions x (u32 last position, f64 weight) then nclassifier x f64
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from .codes import IntArray
from .doc_map import DocMapEntry, MemberRow, encode_doc_map
from .document import IndexDocument
from .grouping import Group, group_partition
from .ids import DOC_TYPE, DocType, term_id
from .packed_table import PackedTableTool, pack_columns
from .positions import encode_positions
from .postings import BLOCK_SIZE, encode_postings

LAST_ENTRIES_TOOL = PackedTableTool.of(
    "term_id:BLOB docs:INT occurrences:INT offset:INT length:INT last_doc_index:INT "
    "last_offset:INT")
_BLOB_HEAD = struct.Struct(">IIIIIB")


class Vocabulary:
    """Terms of one partition, numbered in order of first sight, with their term_ids."""

    __slots__ = ("ids", "term_ids", "terms")

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.term_ids: list[bytes] = []
        self.terms: list[str] = []

    def lookup_many(self, terms: Sequence[str]) -> npt.NDArray[np.int32]:
        ids = self.ids
        numbers = list(map(ids.get, terms))
        if None in numbers:
            for i, number in enumerate(numbers):
                if number is None:
                    term = terms[i]
                    number = ids.get(term)
                    if number is None:
                        number = ids[term] = len(self.terms)
                        self.terms.append(term)
                        self.term_ids.append(term_id(term))
                    numbers[i] = number
        return np.array(numbers, dtype=np.int32)

    def __len__(self) -> int:
        return len(self.terms)


@dataclass(frozen=True, slots=True)
class PartitionDoc:
    """What the writer keeps in memory per document of the active partition."""

    doc_id: bytes
    length: int
    terms: npt.NDArray[np.int32]       # vocabulary numbers
    counts: npt.NDArray[np.int32]      # frequency of each term
    positions: npt.NDArray[np.int32]   # positions, term after term
    meta: npt.NDArray[np.int32]        # vocabulary numbers of meta words
    regions: tuple[tuple[int, float], ...]
    classifier_scores: tuple[float, ...]
    summary_offset: int
    summary_length: int
    cache_offset: int
    cache_length: int
    blob_end: int
    blob_crc: int


@dataclass(frozen=True, slots=True)
class DocIndexData:
    """A decoded document index blob."""

    length: int
    terms: list[str]
    meta_words: list[str]
    counts: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int64]
    regions: tuple[tuple[int, float], ...]
    classifier_scores: tuple[float, ...]


def _joined(strings: Sequence[str]) -> bytes:
    """Strings each followed by NUL (terms never contain NUL: we refuse those that do)."""
    if not strings:
        return b""
    text = "\0".join(strings) + "\0"
    if text.count("\0") != len(strings):
        raise ValueError("a term contains a NUL character")
    return text.encode("utf-8", "surrogatepass")


def encode_doc_index(doc: IndexDocument) -> tuple[bytes, list[str], npt.NDArray[np.int32],
                                                  npt.NDArray[np.int32]]:
    """The compressed index blob of ``doc`` plus its terms, counts and flat positions."""
    terms = list(doc.terms)
    values = doc.terms.values()
    counts = np.fromiter(map(len, values), dtype=np.int32, count=len(terms))
    total = int(counts.sum())
    positions = np.fromiter(chain.from_iterable(values), dtype=np.int32, count=total)
    raw_terms = _joined(terms)
    raw_meta = _joined(doc.meta_words)
    regions = np.array([tuple(r) for r in doc.region_weights], dtype=[("p", ">u4"), ("w", ">f8")]) \
        if doc.region_weights else np.zeros(0, dtype=[("p", ">u4"), ("w", ">f8")])
    wide = bool(total) and int(positions.max()) > 0xFFFF or bool(counts.size) and int(
        counts.max()) > 0xFFFF
    small = ">u4" if wide else ">u2"
    parts = [
        _BLOB_HEAD.pack(doc.length, len(terms), len(doc.meta_words), len(regions),
                        len(doc.classifier_scores), wide),
        struct.pack(">I", len(raw_terms)), raw_terms,
        struct.pack(">I", len(raw_meta)), raw_meta,
        counts.astype(small).tobytes(),
        positions.astype(small).tobytes(),
        regions.tobytes(),
        np.array(doc.classifier_scores, dtype=">f8").tobytes(),
    ]
    return zlib.compress(b"".join(parts), 1), terms, counts, positions


def decode_doc_index(blob: bytes) -> DocIndexData:
    """Inverse of :func:`encode_doc_index`; raises ``ValueError`` (or ``zlib.error``)."""
    raw = zlib.decompress(blob)
    length, nterms, nmeta, nregions, nclass, wide = _BLOB_HEAD.unpack_from(raw)
    small = ">u4" if wide else ">u2"
    pos = _BLOB_HEAD.size

    def take(count: int, dtype: npt.DTypeLike) -> npt.NDArray[np.generic]:
        nonlocal pos
        arr = np.frombuffer(raw, dtype=dtype, count=count, offset=pos)
        pos += arr.nbytes
        return arr

    def strings(count: int) -> list[str]:
        nonlocal pos
        (size,) = struct.unpack_from(">I", raw, pos)
        pos += 4
        chunk = raw[pos:pos + size]
        pos += size
        if not count:
            if size:
                raise ValueError("unexpected strings")
            return []
        if not chunk.endswith(b"\0"):
            raise ValueError("strings not NUL terminated")
        out = chunk[:-1].decode("utf-8", "surrogatepass").split("\0")
        if len(out) != count:
            raise ValueError("string count mismatch")
        return out

    terms = strings(nterms)
    meta = strings(nmeta)
    counts = take(nterms, small).astype(np.int64)
    positions = take(int(counts.sum()), small).astype(np.int64)
    regions = take(nregions, [("p", ">u4"), ("w", ">f8")])
    classifier = take(nclass, ">f8")
    if pos != len(raw):
        raise ValueError("document index blob has stray bytes")
    return DocIndexData(length, terms, meta, counts, positions,
                        tuple((int(p), float(w)) for p, w in regions.tolist()),
                        tuple(float(c) for c in classifier.tolist()))


@dataclass(frozen=True, slots=True)
class BuiltPartition:
    doc_map: bytes
    positions: bytes
    postings: bytes
    last_entries: bytes
    groups: int
    terms: int
    postings_count: int
    positions_count: int


def _contributors(group: Group, docs: Sequence[PartitionDoc]) -> list[int]:
    """Members whose text is posted under the group: the representative, then its link
    documents (anchor text describes the target). Duplicate pages (same text) are not posted
    twice."""
    rep = group.representative
    return [rep, *[i for i in group.members[1:] if docs[i].doc_id[DOC_TYPE] == DocType.LINK]]


def build_partition(docs: Sequence[PartitionDoc], vocab: Vocabulary,
                    block_size: int = BLOCK_SIZE) -> BuiltPartition:
    """Group ``docs`` (in append order), then encode doc_map, positions, postings and the term
    table (last_entries) of the partition."""
    groups = group_partition([d.doc_id for d in docs])
    ngroups = len(groups)
    entries: list[DocMapEntry] = []
    member_group = np.zeros(len(docs), dtype=np.int64)
    seg_terms: list[npt.NDArray[np.int32]] = []
    seg_counts: list[npt.NDArray[np.int32]] = []
    seg_pos: list[npt.NDArray[np.int32]] = []
    seg_group: list[int] = []
    seg_shift: list[int] = []
    seg_npos: list[int] = []
    meta_terms: list[npt.NDArray[np.int32]] = []
    meta_group: list[int] = []
    for g, group in enumerate(groups):
        for member in group.members:
            member_group[member] = g
        shift = 0
        regions: list[tuple[int, float]] = []
        for member in _contributors(group, docs):
            doc = docs[member]
            seg_terms.append(doc.terms)
            seg_counts.append(doc.counts)
            seg_pos.append(doc.positions)
            seg_group.append(g)
            seg_shift.append(shift)
            seg_npos.append(doc.positions.size)
            if doc.meta.size:
                meta_terms.append(doc.meta)
                meta_group.append(g)
            if doc.regions:
                regions.extend((p + shift, w) for p, w in doc.regions)
            elif shift and doc.length:
                regions.append((shift + doc.length - 1, 1.0))
            shift += doc.length
        rep = docs[group.representative]
        entries.append(DocMapEntry(rep.doc_id, group.representative, float(group.score), shift,
                                   tuple(regions), rep.classifier_scores))
    members = [MemberRow(d.doc_id, int(member_group[i]), d.summary_offset, d.summary_length,
                         d.cache_offset, d.cache_length, d.blob_end, d.blob_crc)
               for i, d in enumerate(docs)]
    doc_map = encode_doc_map(entries, members)

    # entries: one per (contributing document, term); their positions are contiguous in
    # ``pos_value`` and increasing; a group's contributors come in shift order, so equal
    # (term, group) keys in a stable sort line up with increasing positions
    def cat(parts: list[npt.NDArray[np.int32]]) -> IntArray:
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

    terms_cat = cat(seg_terms)
    counts_cat = cat(seg_counts)
    npos = np.array(seg_npos, dtype=np.int64)
    pos_value = cat(seg_pos) + np.repeat(np.array(seg_shift, dtype=np.int64), npos)
    entry_group = np.repeat(np.array(seg_group, dtype=np.int64),
                            [t.size for t in seg_terms]) if seg_terms else np.zeros(0, np.int64)
    meta_term = cat(meta_terms)
    meta_grp = np.repeat(np.array(meta_group, dtype=np.int64),
                         [m.size for m in meta_terms]) if meta_terms else np.zeros(0, np.int64)
    # term lists in term_id order
    seen = np.bincount(np.concatenate([terms_cat, meta_term]), minlength=len(vocab))
    order = sorted(np.flatnonzero(seen).tolist(), key=vocab.term_ids.__getitem__)
    rank_of = np.zeros(len(vocab) + 1, dtype=np.int64)
    rank_of[np.array(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
    nlists = len(order)
    width = max(ngroups, 1)
    all_keys = np.concatenate([rank_of[terms_cat] * width + entry_group,
                               rank_of[meta_term] * width + meta_grp])
    all_counts = np.concatenate([counts_cat, np.zeros(meta_term.size, np.int64)])
    all_start = np.concatenate([np.cumsum(counts_cat) - counts_cat,
                                np.zeros(meta_term.size, np.int64)])
    perm = np.argsort(all_keys, kind="stable")
    sorted_keys = all_keys[perm]
    sorted_counts = all_counts[perm]
    sorted_start = all_start[perm]
    total = int(sorted_counts.sum())
    # gather positions in entry order
    gather = np.repeat(sorted_start - (np.cumsum(sorted_counts) - sorted_counts),
                       sorted_counts) + np.arange(total, dtype=np.int64)
    pos_value = pos_value[gather]
    boundary = np.flatnonzero(np.diff(sorted_keys, prepend=-1) != 0)
    keys = sorted_keys[boundary]
    freq = np.add.reduceat(sorted_counts, boundary) if boundary.size else np.zeros(0, np.int64)
    entry_list = keys // width
    entry_doc = keys % width
    entry_first = np.cumsum(freq) - freq
    steps = np.diff(pos_value)
    inside = np.ones(total, dtype=bool)
    inside[entry_first[freq > 0]] = False
    if np.any(steps[inside[1:]] <= 0):
        raise ValueError("a document repeats a position for one term")
    positions_payload, entry_bits, rice_k, _ = encode_positions(pos_value, freq, entry_list,
                                                                 nlists)
    postings_payload, list_offset, list_length = encode_postings(
        entry_list, entry_doc, freq, entry_bits, rice_k, nlists, block_size)
    # term table
    entry_start = np.cumsum(entry_bits) - entry_bits
    docs_per_list = np.bincount(entry_list, minlength=nlists)
    occurrences = np.bincount(entry_list, weights=freq, minlength=nlists).astype(np.int64)
    last_entry = np.cumsum(docs_per_list) - 1
    last_doc = entry_doc[last_entry] if nlists else last_entry
    last_off = entry_start[last_entry] if nlists else last_entry
    term_ids = [vocab.term_ids[v] for v in order]
    last_entries = pack_columns(LAST_ENTRIES_TOOL, term_ids, np.column_stack(
        [docs_per_list, occurrences, list_offset, list_length, last_doc, last_off]))
    return BuiltPartition(doc_map, positions_payload, postings_payload, last_entries, ngroups,
                          nlists, int(keys.size), total)
