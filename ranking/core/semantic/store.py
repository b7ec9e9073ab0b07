"""A bundle's page embeddings, stored beside its index: numpy arrays keyed by url hash.

Layer: ``ranking.core`` (pure Python and numpy). Written by
:func:`ranking.core.semantic.build.build_semantic_index` (the ``embed_index`` management
command), read by the semantic re-ranking (:mod:`ranking.core.semantic.rerank`) and the "Similar"
pages (:func:`nearest`).

Layout, in the bundle folder (``<work>/qs<n>/IndexData<ts>/``)::

    semantic/
        meta.json      {"model": embedder name, "dim": d, "count": n, "built_at": unix time,
                        "seconds": time the build took, "embedded": pages embedded by it}
        keys.npy       uint64[n], ascending: each page's url hash (the doc_id's first 8 bytes)
        doc_ids.npy    uint8[n, 24]: the page document embedded for that url
        vectors.npy    float16[n, d]: its embedding, of length 1

A build writes a new folder beside it and swaps the two by renames, so that a reader sees
either the old arrays or the new ones (or, for an instant, none: the signal is then off for
that search). Readers memory-map the arrays: a large index costs address space, not memory.
A url is one row: pages are grouped by url hash at search time, so a group's representative
(a page or a link document to it) finds its page's vector by the hash it carries.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from indexer.core.runtime.reloading import ReloadingFile, SharedPerPath

logger = logging.getLogger(__name__)

SEMANTIC_DIR = "semantic"
META = "meta.json"
BLOCK_ROWS = 65536  # rows of vectors converted to float32 at once by nearest()
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]


def semantic_dir(bundle: str | os.PathLike[str]) -> Path:
    """Where the page embeddings of a bundle folder live."""
    return Path(bundle) / SEMANTIC_DIR


def url_keys(doc_ids: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The url hash (the first 8 bytes) of each 24-byte doc_id row, as uint64 keys."""
    ids = np.ascontiguousarray(np.asarray(doc_ids, dtype=np.uint8).reshape(-1, 24)[:, :8])
    return ids.view(">u8").ravel().astype(np.uint64)


@dataclass(frozen=True, slots=True)
class SemanticIndex:
    """The arrays of one bundle's ``semantic/`` folder (see the module docstring)."""

    model: str
    keys: npt.NDArray[np.uint64]
    doc_ids: npt.NDArray[np.uint8]
    vectors: npt.NDArray[np.float16]
    meta: dict

    def __len__(self) -> int:
        return int(self.keys.size)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def rows_of(self, keys: npt.NDArray[np.uint64]) -> IntArray:
        """The row of each url key, -1 where the url has no embedding (one vectorised
        binary search)."""
        keys = np.asarray(keys, dtype=np.uint64)
        if not len(self) or not keys.size:
            return np.full(keys.size, -1, np.int64)
        at = np.minimum(np.searchsorted(self.keys, keys), len(self) - 1)
        return np.where(self.keys[at] == keys, at, -1).astype(np.int64)

    def similarities(self, rows: IntArray, vector: FloatArray) -> FloatArray:
        """Cosine of ``vector`` with the embeddings of ``rows`` (all found)."""
        return self.vectors[rows].astype(np.float32) @ vector.astype(np.float32)

    def nearest(self, vector: FloatArray, n: int, exclude: IntArray | None = None
                ) -> tuple[IntArray, FloatArray]:
        """The ``n`` rows most similar to ``vector`` (cosine, highest first), without the rows
        ``exclude``; a brute-force scan in blocks of ``BLOCK_ROWS``."""
        sims = np.empty(len(self), np.float32)
        v = vector.astype(np.float32)
        for lo in range(0, len(self), BLOCK_ROWS):
            sims[lo:lo + BLOCK_ROWS] = self.vectors[lo:lo + BLOCK_ROWS].astype(np.float32) @ v
        if exclude is not None and exclude.size:
            sims[exclude[exclude >= 0]] = -np.inf
        n = max(0, min(n, int(np.isfinite(sims).sum())))
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        top = np.argpartition(-sims, n - 1)[:n]
        top = top[np.argsort(-sims[top], kind="stable")]
        return top.astype(np.int64), sims[top]


def load_semantic_index(folder: Path) -> SemanticIndex:
    """The arrays of ``folder`` (memory-mapped). Raises OSError or ValueError when a file is
    missing or the arrays disagree."""
    meta = json.loads((folder / META).read_text(encoding="utf-8"))
    keys = np.load(folder / "keys.npy", mmap_mode="r")
    doc_ids = np.load(folder / "doc_ids.npy", mmap_mode="r")
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    n = keys.shape[0]
    if doc_ids.shape != (n, 24) or vectors.ndim != 2 or vectors.shape[0] != n:
        raise ValueError(f"{folder}: arrays of different lengths")
    if n > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        raise ValueError(f"{folder}: keys not strictly ascending")
    return SemanticIndex(str(meta.get("model", "")), keys, doc_ids, vectors, meta)


def write_semantic_index(folder: Path, model: str, doc_ids: npt.NDArray[np.uint8],
                         vectors: npt.NDArray[np.floating], extra: dict | None = None) -> int:
    """Write the embeddings ``vectors`` of the page documents ``doc_ids`` (one per url) to
    ``folder``, replacing what is there by renames (see the module docstring). Returns the
    number of rows."""
    keys = url_keys(doc_ids)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        raise ValueError("two embeddings for one url")
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    fresh = folder.with_name(f".{folder.name}.new-{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    np.save(fresh / "keys.npy", keys)
    np.save(fresh / "doc_ids.npy", np.asarray(doc_ids, np.uint8).reshape(-1, 24)[order])
    np.save(fresh / "vectors.npy", np.asarray(vectors, np.float32)[order].astype(np.float16))
    meta = {"model": model, "dim": int(np.asarray(vectors).shape[1]) if keys.size else 0,
            "count": int(keys.size), "built_at": time.time(), **(extra or {})}
    (fresh / META).write_text(json.dumps(meta), encoding="utf-8")
    old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
    if folder.exists():
        os.replace(folder, old)
    os.replace(fresh, folder)
    shutil.rmtree(old, ignore_errors=True)
    return int(keys.size)


class CachedSemanticIndex(ReloadingFile[SemanticIndex]):
    """The semantic index of one bundle folder, loaded again when its ``meta.json`` changes
    (the rule of :mod:`indexer.core.runtime.reloading`; a rebuild swaps the whole folder);
    None while there is none (or it cannot be read: logged once per version)."""

    def __init__(self, bundle: str | os.PathLike[str]) -> None:
        folder = semantic_dir(bundle)
        super().__init__(folder, load_semantic_index, errors=(OSError, ValueError),
                         stamped=folder / META)
        self.folder = folder

    def failed(self, exc: BaseException) -> str | None:
        logger.error("page embeddings unusable: %s; searching without them", exc)
        return str(exc)


cached_semantic_index = SharedPerPath(CachedSemanticIndex)
"""The process-wide :class:`CachedSemanticIndex` of a bundle folder."""
