"""Build a partition's derived files (doc_map, positions, postings, last_entries).

Layer: ``indexer.core``. Called by :class:`indexer.core.bundle.writer.IndexBundleWriter` to refresh the
active partition and to close it, and by :mod:`indexer.core.bundle.reorder`. Groups and the doc_map are
made here; the term lists (positions, postings, last_entries' columns) by
:mod:`indexer.core.partition.term_lists`, a chunk of lists at a time so that the build's memory stays a
few bytes per position above the documents'. Everything per posting or per position is a numpy
array operation; Python loops run per document, per term and per chunk only.

The partition's input is what :class:`ActiveDocs` keeps of its documents (built from
:class:`~indexer.core.documents.doc_index.DocBatch` batches as they are appended, or rebuilt from the
stored document index blobs by :func:`load_partition_docs`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import count

import numpy as np
import numpy.typing as npt

from ..documents.doc_batch_decode import decode_doc_batch
from ..documents.doc_index import DocBatch, decode_doc_index
from ..documents.store import PartitionDocumentBundle
from ..errors import CorruptIndexError
from ..files.packed_columns import pack_columns
from ..files.packed_table import PackedTableTool
from ..ids import DOC_ID_LEN, DOC_TYPE, DocType, term_ids
from .anchors import AnchorBoost, Regions, boosted_regions, link_sources
from .doc_map import encode_doc_map_columns
from .grouping import Group, group_partition
from .postings import BLOCK_SIZE
from .term_lists import CHUNK_POSITIONS, EncodedLists, Entries, encode_lists, index_dtype
from .url_columns import UrlColumns, UrlParts, summary_url, url_parts

LAST_ENTRIES_TOOL = PackedTableTool.of(
    "term_id:BLOB docs:INT occurrences:INT offset:INT length:INT last_doc_index:INT "
    "last_offset:INT")


class Vocabulary:
    """Terms of one partition, numbered in order of first sight, with their term_ids.

    ``ids`` numbers an unseen term on first lookup (a ``defaultdict`` whose factory counts), so
    a batch's terms are numbered by one ``map`` in C; term_ids are computed in batches when
    a partition is built (:meth:`term_ids`)."""

    __slots__ = ("ids", "terms", "_term_ids")

    def __init__(self) -> None:
        self.ids: defaultdict[str, int] = defaultdict(count().__next__)
        self.terms: list[str] = []
        self._term_ids: list[bytes] = []

    def lookup_many(self, terms: Sequence[str]) -> npt.NDArray[np.int32]:
        """The number of each of ``terms``, numbering unseen terms in order of first sight.
        New terms are listed from the numbers alone: a new number's first occurrence is
        where the numbers first exceed all before them (listing them from the dictionary
        would walk every known term first, a partition's worth per batch)."""
        known = len(self.ids)
        numbers = np.fromiter(map(self.ids.__getitem__, terms), dtype=np.int32,
                              count=len(terms))
        if len(self.ids) > known:
            at = np.flatnonzero(numbers >= known)
            new = numbers[at]
            first = np.ones(new.size, dtype=bool)
            first[1:] = new[1:] > np.maximum.accumulate(new)[:-1]
            self.terms.extend([terms[i] for i in at[first].tolist()])
        return numbers

    def term_ids(self) -> list[bytes]:
        """The term_id of every term, by number."""
        if len(self._term_ids) < len(self.terms):
            self._term_ids.extend(term_ids(self.terms[len(self._term_ids):]))
        return self._term_ids

    def __len__(self) -> int:
        return len(self.terms)


_STORE_COLUMNS = ("summary_offset", "summary_length", "cache_offset", "cache_length",
                  "blob_end", "blob_crc")


@dataclass(frozen=True, slots=True)
class _Chunk:
    """A batch as :class:`ActiveDocs` keeps it (see :meth:`ActiveDocs.chunk`)."""

    batch: DocBatch
    entry_terms: npt.NDArray[np.int32]
    entry_counts: npt.NDArray[np.int32]
    positions: npt.NDArray[np.int32]
    nentries: npt.NDArray[np.int64]
    npos: npt.NDArray[np.int64]
    store: npt.NDArray[np.int64]


class ActiveDocs:
    """What the writer keeps in memory of the active partition, column-wise.

    Per document: doc_id, length, regions, classifier scores, where its bytes are stored
    (``_STORE_COLUMNS``), the parts of its summary's url (None when the documents were added
    without their summaries: the partition then has no url columns) and the range of its
    *entries* and positions. A document's entries are
    its terms (vocabulary numbers, with frequencies) followed by its meta words (frequency 0);
    its positions follow its terms' order. Arrays are kept per appended batch and joined when a
    partition is built."""

    def __init__(self) -> None:
        self.doc_ids: list[bytes] = []
        self.lengths: list[int] = []
        self.regions: list[tuple[tuple[int, float], ...]] = []
        self.classifier_scores: list[tuple[float, ...]] = []
        self.urls: list[UrlParts | None] = []
        self._entry_terms: list[npt.NDArray[np.int32]] = []
        self._entry_counts: list[npt.NDArray[np.int32]] = []
        self._positions: list[npt.NDArray[np.int32]] = []
        self._nentries: list[npt.NDArray[np.int64]] = []
        self._npos: list[npt.NDArray[np.int64]] = []
        self._store: list[npt.NDArray[np.int64]] = []

    def __len__(self) -> int:
        return len(self.doc_ids)

    def add(self, batch: DocBatch, vocab: Vocabulary, store: npt.NDArray[np.int64],
            summaries: Sequence[bytes] | None = None) -> None:
        """Append ``batch``; ``store`` holds one row of ``_STORE_COLUMNS`` per document,
        ``summaries`` their stored summaries (gzip), whose urls the url columns are made of."""
        self.add_chunk(self.chunk(batch, vocab, store))
        self.urls.extend([url_parts(summary_url(s)) for s in summaries] if summaries is not None
                         else [None] * len(batch))

    @staticmethod
    def chunk(batch: DocBatch, vocab: Vocabulary, store: npt.NDArray[np.int64]) -> _Chunk:
        """``batch`` in the form :meth:`add_chunk` keeps (numbering its new terms in ``vocab``;
        a term numbered by a chunk that is never added costs nothing but its number)."""
        n = len(batch)
        term_no = vocab.lookup_many(batch.terms)
        meta_no = vocab.lookup_many(batch.meta)
        nt, nm = batch.nterms, batch.nmeta
        ne = nt + nm
        start = np.cumsum(ne) - ne
        terms = np.empty(int(ne.sum()), dtype=np.int32)
        counts = np.zeros(terms.size, dtype=np.int32)
        t_at = np.repeat(start - (np.cumsum(nt) - nt), nt) + np.arange(term_no.size)
        m_at = np.repeat(start + nt - (np.cumsum(nm) - nm), nm) + np.arange(meta_no.size)
        terms[t_at] = term_no
        terms[m_at] = meta_no
        counts[t_at] = batch.counts
        return _Chunk(batch, terms, counts, batch.positions.astype(np.int32), ne, batch.npos(),
                      np.asarray(store, dtype=np.int64).reshape(n, len(_STORE_COLUMNS)))

    def add_chunk(self, chunk: _Chunk) -> None:
        batch = chunk.batch
        if not len(batch):
            return
        self._entry_terms.append(chunk.entry_terms)
        self._entry_counts.append(chunk.entry_counts)
        self._positions.append(chunk.positions)
        self._nentries.append(chunk.nentries)
        self._npos.append(chunk.npos)
        self._store.append(chunk.store)
        self.doc_ids.extend(batch.doc_ids)
        self.lengths.extend(batch.lengths)
        self.regions.extend(batch.regions)
        self.classifier_scores.extend(batch.classifier_scores)
        if len(self._store) > 64:
            self._compact()

    def _compact(self) -> None:
        for name in ("_entry_terms", "_entry_counts", "_positions", "_nentries", "_npos",
                     "_store"):
            parts = getattr(self, name)
            if len(parts) > 1:
                setattr(self, name, [np.concatenate(parts)])

    def columns(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32],
                               npt.NDArray[np.int32], npt.NDArray[np.int64],
                               npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(entry terms, entry counts, positions, entries per doc, positions per doc,
        store rows (n x 6))."""
        self._compact()
        if not self._store:
            z32, z64 = np.zeros(0, np.int32), np.zeros(0, np.int64)
            return z32, z32, z32, z64, z64, np.zeros((0, len(_STORE_COLUMNS)), np.int64)
        return (self._entry_terms[0], self._entry_counts[0], self._positions[0],
                self._nentries[0], self._npos[0], self._store[0])


@dataclass(frozen=True, slots=True)
class BuiltPartition:
    doc_map: bytes
    positions: bytes
    postings: bytes
    last_entries: bytes
    url_columns: bytes | None  # None: a document's url is unknown (no columns written)
    block_maxima: bytes  # indexer.core.partition.block_maxima
    groups: int
    terms: int
    postings_count: int
    positions_count: int


def load_partition_docs(documents: PartitionDocumentBundle, number: int
                        ) -> tuple[ActiveDocs, Vocabulary]:
    """Partition ``number``'s documents as :class:`ActiveDocs`, rebuilt from the document
    index blobs stored beside their summaries (what :func:`build_partition` needs): the writer
    reloads its active partition this way after a crash, and a re-order rebuilds a finished
    partition this way. Raises :class:`CorruptIndexError` for a blob that does not decode."""
    docs, vocab = ActiveDocs(), Vocabulary()
    records = documents.read_records(number)
    if not records:
        return docs, vocab
    path = documents.blob_path(number)
    with open(path, "rb") as handle:
        data = handle.read()
    ids = [rec.doc_id for rec in records]
    blobs = [data[rec.index_offset:rec.index_offset + rec.index_length] for rec in records]
    batch = decode_doc_batch(blobs, ids)
    if batch is None:  # a bad blob: decoded one at a time, the first bad one is named
        parsed = []
        for rec, blob in zip(records, blobs, strict=True):
            try:
                parsed.append(decode_doc_index(blob))
            except Exception as exc:  # zlib.error, ValueError, struct.error
                raise CorruptIndexError(path, f"document index blob at {rec.index_offset}: "
                                              f"{exc}") from exc
        batch = DocBatch.concat(parsed, ids)
    store = np.array([[rec.summary_offset, rec.summary_length, rec.cache_offset,
                       rec.cache_length, rec.end, rec.blob_crc] for rec in records],
                     dtype=np.int64)
    docs.add(batch, vocab, store, [data[rec.summary_offset:rec.summary_offset
                                        + rec.summary_length] for rec in records])
    return docs, vocab


GroupOrder = Callable[[list[Group], list[bytes]], list[Group]]


def build_partition(docs: ActiveDocs, vocab: Vocabulary, block_size: int = BLOCK_SIZE,
                    order: GroupOrder | None = None,
                    chunk_positions: int = CHUNK_POSITIONS,
                    anchor: AnchorBoost | None = None) -> BuiltPartition:
    """Group ``docs`` (in append order), then encode doc_map, positions, postings and the term
    table (last_entries) of the partition.

    ``order`` (optional) re-orders the groups (given in crawl doc_map order, with the doc_ids)
    and returns them in the doc_map order to write, each with the score to store (see
    :func:`indexer.core.partition.grouping.importance_order`); postings follow the doc_map order.

    The text posted under a group is that of its *contributors*: the representative, then its
    link documents (anchor text describes the target), each shifted past the previous ones'
    lengths. Duplicate pages (same text) are not posted twice.

    The url columns (:mod:`indexer.core.partition.url_columns`) hold each group's
    representative's url parts, when every document's is known.

    ``anchor`` (optional): the boost of a link document's source page, by url hash; each
    link document's region weights are multiplied by it here, the stored documents are not
    (:mod:`indexer.core.partition.anchors`).

    Term lists are encoded about ``chunk_positions`` positions at a time
    (:mod:`indexer.core.partition.term_lists`), so that the build's memory beyond ``docs`` is a few
    32-bit columns per entry plus one chunk's working arrays; the bytes do not depend on it.
    Raises ``ValueError`` when a document repeats a position for one term."""
    doc_ids = docs.doc_ids
    groups = group_partition(doc_ids)
    if order is not None:
        groups = order(groups, doc_ids)
    e_terms, e_counts, positions, nentries, _, store = docs.columns()
    id_bytes = b"".join(doc_ids)
    regions = docs.regions
    if anchor is not None:
        rows, source, urls = link_sources(doc_ids, vocab.terms, e_terms, e_counts, nentries)
        regions = boosted_regions(regions, rows, source, urls, anchor)
    made = _contributors(groups, docs, id_bytes, regions)
    doc_map = _encode_doc_map(groups, docs, made, id_bytes, store)
    entries = _gather_entries(made, docs.lengths, e_terms, e_counts, positions, nentries)
    lists = encode_lists(vocab.term_ids(), entries, len(vocab), block_size, chunk_positions)
    url_columns = None
    if len(docs.urls) == len(doc_ids):
        urls = [u for u in (docs.urls[g.representative] for g in groups) if u is not None]
        url_columns = UrlColumns.of(urls).encode() if len(urls) == len(groups) else None
    return BuiltPartition(doc_map, lists.positions, lists.postings, _term_table(vocab, lists),
                          url_columns, lists.block_maxima, len(groups), len(lists.order),
                          lists.postings_count,
                          lists.positions_count)


@dataclass(frozen=True, slots=True)
class _Contributors:
    """How a partition's documents make its groups: ``contrib`` the documents whose text is
    posted (each group's representative, then its link documents), in group order, with
    ``contrib_group`` their group; ``member_group`` the group of every document; ``regions``
    and ``length`` each group's region weights and length (its contributors' back to back)."""

    contrib: list[int]
    contrib_group: list[int]
    member_group: npt.NDArray[np.int64]
    regions: list[tuple[tuple[int, float], ...]]
    length: list[int]


def _contributors(groups: list[Group], docs: ActiveDocs, id_bytes: bytes,
                  regions: list[Regions]) -> _Contributors:
    """The contributors, member groups, regions (``regions``: each document's) and lengths
    of ``groups`` (one Python step per group, and per member of the groups that have more
    than one)."""
    n = len(docs.doc_ids)
    lengths = docs.lengths
    is_link = (np.frombuffer(id_bytes, dtype=np.uint8)[DOC_TYPE::DOC_ID_LEN]
               == DocType.LINK).tolist()
    contrib: list[int] = []
    contrib_group: list[int] = []
    member_order: list[int] = []
    member_group_of: list[int] = []
    group_regions: list[tuple[tuple[int, float], ...]] = []
    group_length: list[int] = []
    for g, group in enumerate(groups):
        rep = group.representative
        members = group.members
        if len(members) == 1:
            contrib.append(rep)
            contrib_group.append(g)
            member_order.append(rep)
            member_group_of.append(g)
            group_regions.append(regions[rep])
            group_length.append(lengths[rep])
            continue
        member_order.extend(members)
        member_group_of.extend([g] * len(members))
        shift = 0
        regs: list[tuple[int, float]] = []
        for member in (rep, *[i for i in members[1:] if is_link[i]]):
            contrib.append(member)
            contrib_group.append(g)
            if regions[member]:
                regs.extend((p + shift, w) for p, w in regions[member])
            elif shift and lengths[member]:
                regs.append((shift + lengths[member] - 1, 1.0))
            shift += lengths[member]
        group_regions.append(tuple(regs))
        group_length.append(shift)
    member_group = np.empty(n, dtype=np.int64)
    member_group[np.array(member_order, dtype=np.int64)] = np.array(member_group_of,
                                                                   dtype=np.int64)
    return _Contributors(contrib, contrib_group, member_group, group_regions, group_length)


def _encode_doc_map(groups: list[Group], docs: ActiveDocs, made: _Contributors,
                    id_bytes: bytes, store: npt.NDArray[np.int64]) -> bytes:
    """The doc_map: per group its representative, score, length and position/score list
    (one row of (representative, score), then its regions, then its classifier scores); per
    document its group and where its bytes are stored."""
    ngroups = len(groups)
    group_regions = made.regions
    reps = np.array([group.representative for group in groups], dtype=np.int64)
    classifier = [docs.classifier_scores[r] for r in reps.tolist()]
    nregions = np.fromiter(map(len, group_regions), dtype=np.int64, count=ngroups)
    ncls = np.fromiter(map(len, classifier), dtype=np.int64, count=ngroups)
    nrows = 1 + nregions + ncls
    row_start = np.cumsum(nrows) - nrows
    row_pos = np.zeros(int(nrows.sum()), dtype=np.int64)
    row_score = np.zeros(row_pos.size, dtype=np.float64)
    scores = np.array([float(group.score) for group in groups], dtype=np.float64)
    row_pos[row_start] = reps
    row_score[row_start] = scores
    flat_regions = [r for regs in group_regions for r in regs]
    if flat_regions:
        at = np.repeat(row_start + 1 - (np.cumsum(nregions) - nregions), nregions) + np.arange(
            len(flat_regions))
        row_pos[at] = [p for p, _ in flat_regions]
        row_score[at] = [w for _, w in flat_regions]
    flat_cls = [c for cls in classifier for c in cls]
    if flat_cls:
        at = np.repeat(row_start + 1 + nregions - (np.cumsum(ncls) - ncls), ncls) + np.arange(
            len(flat_cls))
        row_score[at] = flat_cls
    rep_bytes = b"".join([docs.doc_ids[r] for r in reps.tolist()])
    return encode_doc_map_columns(
        rep_bytes, reps, scores, np.array(made.length, dtype=np.int64), nregions, nrows,
        row_pos, row_score, id_bytes, np.column_stack([made.member_group, store]))


def _gather_entries(made: _Contributors, lengths: list[int], e_terms: npt.NDArray[np.int32],
                    e_counts: npt.NDArray[np.int32], positions: npt.NDArray[np.int32],
                    nentries: npt.NDArray[np.int64]) -> Entries:
    """Entries: one per (contributing document, term or meta word), in group order, each
    contributor's positions to be shifted past the group's earlier contributors (the
    documents' own arrays when every document contributes, in append order)."""
    n = len(lengths)
    c = np.array(made.contrib, dtype=np.int64)
    cgroup = np.array(made.contrib_group, dtype=np.int64)
    clen = np.array(lengths, dtype=np.int64)[c] if n else np.zeros(0, np.int64)
    cum = np.cumsum(clen) - clen
    first_contrib = np.flatnonzero(np.diff(cgroup, prepend=-1) != 0)
    shift = cum - cum[first_contrib][cgroup]
    ce = nentries[c]
    take = None
    if not np.array_equal(c, np.arange(n)):  # some document does not contribute, or order
        e_start = np.cumsum(nentries) - nentries
        take = np.repeat(e_start[c] - (np.cumsum(ce) - ce), ce)
        take += np.arange(take.size)
        take = take.astype(index_dtype(e_terms.size))
    return Entries(e_terms, e_counts, positions, take, ce, cgroup, shift)


def _term_table(vocab: Vocabulary, lists: EncodedLists, step: int = 1 << 16) -> bytes:
    """last_entries: per term list its term_id, documents, occurrences, byte offset and
    length in the postings, and its last entry's doc_map index and positions bit offset
    (records packed ``step`` lists at a time: the packer's temporaries are some hundred
    bytes per record)."""
    all_ids = vocab.term_ids()
    order = lists.order
    return b"".join(
        pack_columns(LAST_ENTRIES_TOOL, [all_ids[v] for v in order[a:a + step]],
                     lists.table[a:a + step])
        for a in range(0, len(order), step))
