"""Flip bytes in every kind of file of a bundle: the reader either serves exactly the original
results or raises CorruptIndexError naming the damaged file; index_verify names it too."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import make_doc

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.verify import verify_bundle
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.node_format import generation_of
from indexer.core.dictionary.updater import DictionaryUpdater
from indexer.core.errors import CorruptIndexError

DOCS = [make_doc(i, words=(i * 5) % 30 + 2) for i in range(90)]
TERMS = sorted({t for d in DOCS for t in d.terms} | {m for d in DOCS for m in d.meta_words})


def everything(path: Path) -> object:
    """Every answer the reader can give about the bundle."""
    reader = IndexBundleReader(path)
    try:
        out: list[object] = [reader.collection_stats()]
        for term in TERMS:
            cursor = reader.postings(term)
            out.append(cursor.stats)
            for block in cursor:
                pos, counts = cursor.positions(block)
                out.append((block.partition, block.doc_index.tolist(),
                            block.frequency.tolist(), pos.tolist(), counts.tolist()))
        for part in reader.partitions:
            for i in range(part.doc_map.n):
                out.append((reader.doc_id(part.number, i), reader.region_weights(part.number, i),
                            reader.classifier_scores(part.number, i),
                            reader.document_length(part.number, i)))
        for doc in DOCS:
            out.append((reader.summary(doc.doc_id), reader.cached_page(doc.doc_id)))
        out.append(reader.doc_rank(0, np.arange(3)).tolist())
        return out
    finally:
        reader.close()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pristine") / "bundle"
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=40)) as writer:
        writer.append(DOCS)
    DictionaryUpdater(path, leaf_capacity=8, fanout=4).update()  # merges 0 and 1; 2 active
    return path


def _kind(name: str) -> str:
    """A file's name without its generation (``doc_map.g2``, ``nodes.3.btr``)."""
    if generation_of(name) is not None:
        return "nodes.G.btr"
    if ".g" in name and name.split(".g")[-1].isdigit():
        return name.split(".g")[0]
    return name


def test_every_kind_of_file_is_covered(pristine: Path) -> None:
    names = {_kind(p.name) for p in pristine.rglob("*") if p.is_file()}
    assert {"archive_info.txt", "next_partition.txt", "pdb_parameters.txt", "partition_0.ix",
            "partition_0.txt.gz", "MANIFEST", "doc_map", "positions", "postings",
            "last_entries", "nodes.G.btr"} <= names


def test_flipped_bytes_are_detected(pristine: Path, tmp_path: Path) -> None:
    baseline = everything(pristine)
    files = sorted(p.relative_to(pristine) for p in pristine.rglob("*")
                   if p.is_file() and p.name != "LOCK")
    assert len(files) >= 15
    undetected = []
    for rel in files:
        size = (pristine / rel).stat().st_size
        for where in sorted({7, 30, size // 3, size // 2, size - 2}):
            if where >= size:
                continue
            copy = tmp_path / f"c{len(undetected)}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(pristine, copy)
            target = copy / rel
            data = bytearray(target.read_bytes())
            data[where] ^= 0x5A
            target.write_bytes(bytes(data))
            try:
                got = everything(copy)
            except CorruptIndexError as exc:
                assert rel.name in str(exc), (rel, str(exc))
            else:
                assert got == baseline, f"{rel} byte {where}: wrong answers served"
            report = verify_bundle(copy)
            if not any(rel.name in problem for problem in report.problems):
                undetected.append((str(rel), where, report.problems))
            shutil.rmtree(copy)
    assert not undetected


def test_truncated_and_missing_files_are_named(pristine: Path, tmp_path: Path) -> None:
    copy = tmp_path / "b"
    shutil.copytree(pristine, copy)
    postings = copy / "positions_doc_map" / "0" / "postings"
    postings.write_bytes(postings.read_bytes()[:-5])
    with pytest.raises(CorruptIndexError, match="postings"):
        for term in TERMS:
            for _ in IndexBundleReader(copy).postings(term):
                pass
    assert any("postings" in p for p in verify_bundle(copy).problems)
