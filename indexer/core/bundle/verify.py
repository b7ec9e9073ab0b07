"""Whole-bundle checks and summaries: the engines of ``manage.py index_verify`` / ``index_info``.

Layer: ``indexer.core``. Reads every file of a bundle the way the reader does and more: every
stored document (checksums, gzip, index blob), every node of the dictionary, and every posting
list with its positions decoded, cross-checked against the term statistics that describe it.
Problems are collected (one line each, naming the file) rather than raised, so one run reports
everything that is wrong.
"""

from __future__ import annotations

import heapq
import os
import zlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..dictionary.tree import BPlusTree
from ..documents.doc_index import decode_doc_index
from ..documents.store import BlobReader, PartitionDocumentBundle, gunzip
from ..errors import IndexStoreError
from ..files.codes import CodeError
from ..files.storage import read_framed
from ..partition.block_maxima import BlockMaxima
from ..partition.doc_map import DocMap, DocMapFormatError
from ..partition.positions import decode_positions
from ..partition.postings import PostingListReader
from ..partition.url_columns import UrlColumns
from .layout import (
    BLOCK_MAXIMA,
    DICTIONARY,
    DOCUMENTS,
    URL_COLUMNS,
    partition_dir,
    read_archive_info,
    read_next_partition,
    read_partition_manifest,
)
from .reader import load_last_entries

T = TypeVar("T")


@dataclass(slots=True)
class VerifyReport:
    problems: list[str] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    @property
    def ok(self) -> bool:
        return not self.problems

    def guard(self, what: Any, *args: Any) -> Any:
        """``what(*args)``, or None with the problem noted when a file is damaged or missing."""
        try:
            return what(*args)
        except IndexStoreError as exc:
            self.problems.append(str(exc))
        except FileNotFoundError as exc:
            self.problems.append(f"{exc.filename}: missing")
        return None


def _check_list(report: VerifyReport, postings_path: Path, positions_path: Path,
                postings: bytes, positions: bytes, number: int, n_docs: int,
                offset: int, length: int, docs: int, occurrences: int, label: str) -> None:
    try:
        reader = PostingListReader(postings, offset, length, number)
        seen = 0
        total = 0
        last = -1
        while (block := reader.next_block()) is not None:
            if int(block.doc_index[0]) <= last or int(block.doc_index[-1]) >= n_docs:
                raise CodeError("doc indexes out of order or beyond the doc_map")
            last = int(block.doc_index[-1])
            seen += block.doc_index.size
            total += int(block.frequency.sum())
            try:
                decode_positions(positions, block.pos_offset, block.frequency,
                                 block.pos_length, block.rice_k)
            except CodeError as exc:
                report.problems.append(f"{positions_path}: {label}: {exc}")
                return
        if seen != docs or total != occurrences:
            raise CodeError(f"{seen} postings / {total} occurrences, the term record says "
                            f"{docs} / {occurrences}")
        report.checked["lists"] += 1
        report.checked["postings"] += seen
    except CodeError as exc:
        report.problems.append(f"{postings_path}: {label}: {exc}")


def verify_bundle(path: str | os.PathLike[str]) -> VerifyReport:
    """Check a whole bundle; the report lists every problem found."""
    bundle = Path(path)
    report = VerifyReport()
    guard = report.guard
    guard(read_archive_info, bundle)
    next_txt = guard(read_next_partition, bundle)
    docs = guard(lambda: PartitionDocumentBundle(bundle / DOCUMENTS))
    tree = guard(BPlusTree, bundle / DICTIONARY)
    if docs is None:
        return report
    by_partition: dict[int, list[tuple[bytes, tuple[int, ...]]]] = defaultdict(list)
    next_partition = 0
    if tree is not None:
        next_partition = tree.next_partition
        if next_txt is not None and next_txt != next_partition:
            report.problems.append(f"{bundle / 'next_partition.txt'}: says {next_txt}, "
                                   f"dictionary MANIFEST says {next_partition}")
        guard(_scan_dictionary, report, tree, by_partition)
        tree.close()
    for state in docs.partitions:
        number = state.number
        records = guard(docs.read_records, number)
        if records:
            guard(_check_documents, report, docs.blob_path(number), records)
        _check_partition(report, bundle, number, next_partition, by_partition)
    return report


def _scan_dictionary(report: VerifyReport, tree: BPlusTree,
                     by_partition: dict[int, list[tuple[bytes, tuple[int, ...]]]]) -> None:
    """Check the dictionary's log and nodes and file its records by partition."""
    report.checked["dictionary nodes"] = tree.verify_log()
    tree.verify()
    for key, records in tree.items():
        for record in records:
            by_partition[record[0]].append((key, record))
    report.checked["terms"] = len(tree)


def _check_documents(report: VerifyReport, blob_path: Path, records: list[Any]) -> None:
    """Every stored document of a partition: its bytes' checksum, its summary's gzip and its
    index blob."""
    blobs = BlobReader(blob_path)
    try:
        for rec in records:
            data = blobs.document_bytes(rec.start, rec.end, rec.blob_crc)
            gunzip(blob_path, data[:rec.summary_length])
            try:
                decode_doc_index(data[rec.index_offset - rec.start:])
            except (ValueError, zlib.error) as exc:
                report.problems.append(f"{blob_path}: index blob at "
                                       f"{rec.index_offset}: {exc}")
            report.checked["documents"] += 1
    finally:
        blobs.close()


def _check_partition(report: VerifyReport, bundle: Path, number: int, next_partition: int,
                     by_partition: dict[int, list[tuple[bytes, tuple[int, ...]]]]) -> None:
    """Partition ``number``'s derived files: its doc_map, then every term list (from its own
    term table when it is not merged, else from the dictionary's records) with positions."""
    guard = report.guard
    manifest = guard(read_partition_manifest, bundle, number)
    if manifest is None:
        return
    pdir = partition_dir(bundle, number)
    files = manifest["files"]
    payloads = {}
    for kind in ("doc_map", "positions", "postings"):
        payloads[kind] = guard(read_framed, pdir / files[kind], kind)
        report.checked["files"] += 1
    if any(v is None for v in payloads.values()):
        return
    doc_map = _check_doc_map(report, pdir / files["doc_map"], payloads["doc_map"], manifest)
    if doc_map is None:
        return
    if URL_COLUMNS in files:
        _check_url_columns(report, pdir / files[URL_COLUMNS], doc_map.n)
    if BLOCK_MAXIMA in files:
        _check_block_maxima(report, pdir / files[BLOCK_MAXIMA], doc_map.n)
    if number >= next_partition or manifest.get("merged") is False:
        # not merged yet, or re-ordered and not yet merged again: its own term table
        table = guard(load_last_entries, pdir / files["last_entries"])
        if table is None:
            return
        lists = [(key, (docs_, occ, off, ln)) for key, (docs_, occ, off, ln) in
                 table.items()]
    else:
        lists = [(key, rec[1:]) for key, rec in by_partition.get(number, [])]
    for key, (n_with, occ, off, ln) in lists:
        _check_list(report, pdir / files["postings"], pdir / files["positions"],
                    payloads["postings"], payloads["positions"], number, doc_map.n, off,
                    ln, n_with, occ, f"term {key!r}")


def _decoded(report: VerifyReport, path: Path, kind: str,
             decode: Callable[[bytes], T]) -> T | None:
    """The framed file ``path`` of ``kind`` decoded, counted as checked; None (and a
    problem reported) when it cannot be read or decoded."""
    payload = report.guard(read_framed, path, kind)
    if payload is None:
        return None
    report.checked["files"] += 1
    try:
        return decode(payload)
    except ValueError as exc:
        report.problems.append(f"{path}: {exc}")
        return None


def _check_block_maxima(report: VerifyReport, path: Path, entries: int) -> None:
    """The block maxima decode and name doc_map entries only (a reader that finds them
    damaged searches the partition without them)."""
    maxima = _decoded(report, path, BLOCK_MAXIMA, BlockMaxima.decode)
    if maxima is None:
        return
    if maxima.last.size and (int(maxima.last.max()) >= entries or
                             bool((maxima.first > maxima.last).any())):
        report.problems.append(f"{path}: blocks outside the doc_map's {entries} entries")


def _check_url_columns(report: VerifyReport, path: Path, entries: int) -> None:
    """The url columns decode and have a row per doc_map entry (a reader that finds them
    damaged reads the urls from the summaries instead, so this is the only place that
    says so)."""
    columns = _decoded(report, path, URL_COLUMNS, UrlColumns.decode)
    if columns is None:
        return
    if len(columns) != entries:
        report.problems.append(f"{path}: {len(columns)} rows, the doc_map has {entries} "
                               f"entries")


def _check_doc_map(report: VerifyReport, path: Path, payload: bytes,
                   manifest: dict[str, Any]) -> DocMap | None:
    """The doc_map decoded and checked (None when it does not decode): in score order and
    covering the documents its MANIFEST counts."""
    try:
        doc_map = DocMap(payload)
        doc_map.verify()
    except DocMapFormatError as exc:
        report.problems.append(f"{path}: {exc}")
        return None
    if doc_map.n > 1 and bool((doc_map.score[1:] > doc_map.score[:-1]).any()):
        report.problems.append(f"{path}: entries are not in score order")
    if doc_map.m != manifest["docs"]:
        report.problems.append(f"{path}: covers {doc_map.m} documents, "
                               f"MANIFEST says {manifest['docs']}")
    return doc_map


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    number: int
    state: str
    documents: int
    groups: int
    terms: int
    postings: int
    positions: int
    stored_bytes: int
    index_bytes: int


@dataclass(frozen=True, slots=True)
class BundleInfo:
    path: str
    archive: dict[str, Any]
    active_count: int
    visited_urls_count: int
    next_partition: int
    dictionary_terms: int
    dictionary_height: int
    dictionary_bytes: int
    partitions: tuple[PartitionSummary, ...]
    top_terms: tuple[tuple[str, int, int], ...]  # (term_id prefix, occurrences, documents)


def bundle_info(path: str | os.PathLike[str], top: int = 20) -> BundleInfo:
    """Partitions, counts, sizes and the most frequent terms (by occurrences; only the 7
    readable characters of a term are stored, so terms show as their term_id prefix)."""
    bundle = Path(path)
    docs = PartitionDocumentBundle(bundle / DOCUMENTS)
    tree = BPlusTree(bundle / DICTIONARY)
    totals: dict[bytes, list[int]] = defaultdict(lambda: [0, 0])
    for key, records in tree.items():
        for record in records:
            totals[key][0] += record[2]
            totals[key][1] += record[1]
    summaries = []
    for state in docs.partitions:
        number = state.number
        pdir = partition_dir(bundle, number)
        manifest = read_partition_manifest(bundle, number)
        stored = sum(os.path.getsize(p) for p in
                     (docs.directory / f"partition_{number}.ix", docs.blob_path(number))
                     if p.exists())
        index_bytes = 0
        if manifest is not None:
            for name in manifest["files"].values():
                if (pdir / name).exists():
                    index_bytes += (pdir / name).stat().st_size
            if number >= tree.next_partition:
                for key, (n_with, occ, _, _) in load_last_entries(
                        pdir / manifest["files"]["last_entries"]).items():
                    totals[key][0] += occ
                    totals[key][1] += n_with
        m = manifest or {}
        summaries.append(PartitionSummary(
            number, m.get("state", "active (not yet refreshed)"), state.docs,
            m.get("groups", 0), m.get("terms", 0), m.get("postings", 0), m.get("positions", 0),
            stored, index_bytes))
    best = heapq.nlargest(top, totals.items(), key=lambda kv: kv[1][0])
    dict_bytes = sum(p.stat().st_size for p in (bundle / DICTIONARY).iterdir() if p.is_file())
    params = docs.params
    info = BundleInfo(
        str(bundle), read_archive_info(bundle), int(params["active_count"]),
        int(params["visited_urls_count"]), tree.next_partition, len(tree), tree.height,
        dict_bytes, tuple(summaries),
        tuple((k[:7].decode("utf-8", "replace"), v[0], v[1]) for k, v in best))
    tree.close()
    return info
