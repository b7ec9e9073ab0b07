"""Names of the files and folders of an IndexDocumentBundle, and its small top-level files.

Layer: ``indexer.core``. Shared by the writer, the reader, the dictionary updater and verify::

    BUNDLE/archive_info.txt          framed text (JSON): creation time, crawl parameters,
                                     format version
    BUNDLE/next_partition.txt        framed text: one integer, the next partition to merge into
                                     the dictionary (a copy of dictionary/MANIFEST's value,
                                     which is authoritative)
    BUNDLE/LOCK                      flock of the one writer (indexer)
    BUNDLE/documents/                see :mod:`indexer.core.documents.store`
    BUNDLE/positions_doc_map/N/      MANIFEST + doc_map, positions, postings, last_entries
                                     (see :mod:`indexer.core.partition.build`), url_columns
                                     (:mod:`indexer.core.partition.url_columns`; optional),
                                     block_maxima (:mod:`indexer.core.partition.block_maxima`;
                                     optional)
    BUNDLE/dictionary/               see :mod:`indexer.core.dictionary.tree`; LOCK is the updater's
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import CorruptIndexError
from ..files.storage import FORMAT_VERSION, read_text, write_text

ARCHIVE_INFO = "archive_info.txt"
NEXT_PARTITION = "next_partition.txt"
LOCK = "LOCK"
DOCUMENTS = "documents"
POSITIONS_DOC_MAP = "positions_doc_map"
DICTIONARY = "dictionary"
PARTITION_MANIFEST = "MANIFEST"
PARTITION_MANIFEST_KIND = "partition"
DERIVED_FILES = ("doc_map", "positions", "postings", "last_entries")
# written beside them when every document's url is known (indexer.core.partition.url_columns);
# a partition made before it has none, and readers then read urls from the summaries
URL_COLUMNS = "url_columns"
# per block of postings its doc range, largest frequency and offsets (indexer.core.partition.
# block_maxima); a partition made before it has none, and the ranking then reads every match
BLOCK_MAXIMA = "block_maxima"
PARTITION_FILES = (*DERIVED_FILES, URL_COLUMNS, BLOCK_MAXIMA)


def derived_payloads(built: Any) -> dict[str, bytes]:
    """The derived files of a built partition (:class:`indexer.core.partition.build.
    BuiltPartition`) by kind: the four, the url columns when it has them and the block
    maxima."""
    out = {"doc_map": built.doc_map, "positions": built.positions, "postings": built.postings,
           "last_entries": built.last_entries}
    if built.url_columns is not None:
        out[URL_COLUMNS] = built.url_columns
    if getattr(built, "block_maxima", None) is not None:
        out[BLOCK_MAXIMA] = built.block_maxima
    return out


def partition_dir(bundle: Path, number: int) -> Path:
    return bundle / POSITIONS_DOC_MAP / str(number)


def write_archive_info(bundle: Path, crawl_parameters: Mapping[str, Any] | None) -> None:
    info = {"created": time.time(), "crawl_parameters": dict(crawl_parameters or {}),
            "format_version": FORMAT_VERSION}
    write_text(bundle / ARCHIVE_INFO, "archive_info", json.dumps(info, sort_keys=True,
                                                                  indent=1))


def read_archive_info(bundle: Path) -> dict[str, Any]:
    path = bundle / ARCHIVE_INFO
    try:
        return json.loads(read_text(path, "archive_info"))
    except ValueError as exc:
        raise CorruptIndexError(path, f"malformed: {exc}") from exc


def write_next_partition(bundle: Path, number: int) -> None:
    write_text(bundle / NEXT_PARTITION, "next_partition", f"{number}\n")


def read_next_partition(bundle: Path) -> int:
    path = bundle / NEXT_PARTITION
    try:
        return int(read_text(path, "next_partition").strip())
    except ValueError as exc:
        raise CorruptIndexError(path, "not an integer") from exc


def read_partition_manifest(bundle: Path, number: int) -> dict[str, Any] | None:
    path = partition_dir(bundle, number) / PARTITION_MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(read_text(path, PARTITION_MANIFEST_KIND))
        manifest["files"] = dict(manifest["files"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(path, f"malformed manifest: {exc}") from exc
    return manifest


def write_partition_manifest(bundle: Path, number: int, manifest: Mapping[str, Any]) -> None:
    write_text(partition_dir(bundle, number) / PARTITION_MANIFEST, PARTITION_MANIFEST_KIND,
               json.dumps(manifest, sort_keys=True))
