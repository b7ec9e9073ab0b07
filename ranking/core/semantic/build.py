"""Embedding a bundle's pages for the semantic signal: what ``manage.py embed_index`` runs.

Layer: ``ranking.core`` (pure Python). Reads the page documents of an
:class:`~indexer.core.bundle.reader.IndexBundleReader` (the newest copy of each url), embeds each
page's title and stored description (the summary the crawl kept, the first
``MAX_TEXT_CHARS`` characters) with a :class:`~ranking.core.semantic.embedder.TextEmbedder`, in batches,
and writes the arrays beside the bundle (:func:`ranking.core.semantic.store.write_semantic_index`).

A page embedded by an earlier build with the same model and the same doc_id (same url, same
text hash) keeps its vector: a build after more of the crawl embeds only the new or changed
pages. The build reports how long it took per page embedded: the cost of the signal at index
time (``docs/semantic.md`` has the figures).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import DOC_TYPE, DocType
from ranking.core.semantic.embedder import TextEmbedder
from ranking.core.semantic.store import (
    load_semantic_index,
    semantic_dir,
    url_keys,
    write_semantic_index,
)

BATCH = 32
MAX_TEXT_CHARS = 2000


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What a build did: ``pages`` with an embedding now, ``embedded`` by this build (the
    others kept from the previous one), and the seconds spent embedding and in all."""

    pages: int
    embedded: int
    reused: int
    embed_seconds: float
    seconds: float
    model: str

    @property
    def ms_per_page(self) -> float:
        return 1000.0 * self.embed_seconds / self.embedded if self.embedded else 0.0


def page_doc_ids(reader: IndexBundleReader) -> np.ndarray:
    """The doc_ids (uint8[n, 24]) of the bundle's page documents, one per url: the newest
    partition's copy."""
    chunks: list[np.ndarray] = []
    for part in reversed(reader.partitions):
        ids = reader.doc_map(part.number).member_ids
        chunks.append(np.asarray(ids[ids[:, DOC_TYPE] == DocType.PAGE], np.uint8))
    if not chunks:
        return np.zeros((0, 24), np.uint8)
    ids = np.concatenate(chunks)
    _, first = np.unique(url_keys(ids), return_index=True)  # first: the newest partition's
    return ids[np.sort(first)]


def page_text(summary: dict | None) -> str:
    """What is embedded of a page: its title, then its stored description."""
    if not summary:
        return ""
    title = str(summary.get("title") or "").strip()
    description = str(summary.get("description") or "").strip()
    text = f"{title}. {description}" if title and description else title or description
    return text[:MAX_TEXT_CHARS]


def _previous(folder: Path, model: str) -> dict[bytes, np.ndarray]:
    """The vectors of the last build with ``model``, by doc_id (none when there is none)."""
    try:
        old = load_semantic_index(folder)
    except (OSError, ValueError):
        return {}
    if old.model != model:
        return {}
    return {bytes(d): np.asarray(v, np.float32)
            for d, v in zip(np.asarray(old.doc_ids), np.asarray(old.vectors), strict=True)}


def build_semantic_index(reader: IndexBundleReader, embedder: TextEmbedder, *,
                         batch: int = BATCH, progress: Callable[[int, int], None] | None = None
                         ) -> BuildReport:
    """Embed the pages of ``reader``'s bundle and store the arrays beside it (see the module
    docstring); ``progress(done, total)`` after each batch."""
    start = time.perf_counter()
    folder = semantic_dir(reader.path)
    ids = page_doc_ids(reader)
    kept = _previous(folder, embedder.name)
    vectors = np.zeros((len(ids), embedder.dim), np.float32)
    present = np.zeros(len(ids), bool)
    todo: list[tuple[int, str]] = []
    reused = 0
    for i, row in enumerate(ids):
        doc_id = row.tobytes()
        if doc_id in kept:
            vectors[i], present[i] = kept[doc_id], True
            reused += 1
            continue
        text = page_text(reader.summary(doc_id))
        if text:
            todo.append((i, text))
    embed_seconds = 0.0
    for lo in range(0, len(todo), batch):
        chunk = todo[lo:lo + batch]
        t = time.perf_counter()
        got = embedder.embed([text for _, text in chunk])
        embed_seconds += time.perf_counter() - t
        rows = np.array([i for i, _ in chunk], np.int64)
        vectors[rows], present[rows] = got, True
        if progress is not None:
            progress(min(lo + batch, len(todo)), len(todo))
    write_semantic_index(folder, embedder.name, ids[present], vectors[present],
                         {"embedded": len(todo), "embed_seconds": embed_seconds,
                          "seconds": time.perf_counter() - start})
    return BuildReport(int(present.sum()), len(todo), reused, embed_seconds,
                       time.perf_counter() - start, embedder.name)
