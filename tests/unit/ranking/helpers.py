"""Tiny bundles for the query-side tests: documents from word lists, written with the real
IndexBundleWriter so the iterators read exactly what a crawl would produce."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.documents.document import IndexDocument
from indexer.core.ids import DocType, hash7
from indexer.core.text import TextAnalyzer
from ranking.core.postings.blocks import make_keys

META = ("site:all", "safe:all", "safe:true", "lang:all", "lang:en")
_ANALYZER = TextAnalyzer()


@dataclass(frozen=True)
class Doc:
    url: str
    words: tuple[str, ...]
    meta: tuple[str, ...] = ()
    doc_type: DocType = DocType.PAGE
    title_len: int = 0
    summary: dict | None = None
    text_key: str | None = None  # documents with equal keys have equal text hashes


def index_document(doc: Doc) -> IndexDocument:
    positions: dict[str, list[int]] = {}
    for i, w in enumerate(doc.words):
        positions.setdefault(w, []).append(i)
    host = doc.url.split("/")[2]
    n = len(doc.words)
    # as the crawler writes them: a page's first region is always its title's (ending at -1
    # when it has no title words), a link document has one region of anchor text
    regions: tuple[tuple[int, float], ...] = ()
    if doc.doc_type == DocType.LINK:
        regions = ((n - 1, 1.0),) if n else ()
    else:
        regions = ((doc.title_len - 1, 4.0),)
        if n > doc.title_len:
            regions += ((n - 1, 1.0),)
    summary = doc.summary or {"url": doc.url, "title": " ".join(doc.words[:doc.title_len]),
                              "description": " ".join(doc.words[doc.title_len:]),
                              "robot_metas": []}
    return IndexDocument(
        url=doc.url, host=host, doc_type=doc.doc_type,
        text_hash=hash7(doc.text_key or doc.url + "|" + " ".join(doc.words)), summary=summary,
        terms={t: tuple(p) for t, p in positions.items()}, length=n,
        meta_words=tuple(dict.fromkeys((*META, f"site:{host}", *doc.meta))),
        region_weights=regions)


def text_doc(url: str, title: str, body: str, **kw) -> Doc:
    """A page from text, analysed like the crawler does (title words first)."""
    t = _ANALYZER.terms(title, "en")
    b = _ANALYZER.terms(body, "en")
    summary = {"url": url, "title": title, "description": body,
               "robot_metas": kw.pop("robot_metas", [])}
    return Doc(url, tuple(t + b), title_len=len(t), summary=summary, **kw)


def build(path: Path, docs: Sequence[Doc], partition_docs: int = 1000) -> IndexBundleReader:
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=partition_docs)) as writer:
        writer.append([index_document(d) for d in docs])
    return IndexBundleReader(path)


def keys_by_url(reader: IndexBundleReader) -> dict[str, int]:
    """url hash -> key of every doc_map entry (documents with distinct urls and texts)."""
    out = {}
    for part in reader.partitions:
        dm = reader.doc_map(part.number)
        for i in range(dm.n):
            out[dm.doc_id(i)[:8]] = int(make_keys(part.number, np.array([i]))[0])
    return out
