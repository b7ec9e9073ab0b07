"""A crawl's near-duplicate clusters: the rule that forms them, their file and its reader.

Layer: ``indexer.core`` (pure Python + numpy). The link analysis (``linkgraph.core.analysis``)
reads every page's SimHash (:mod:`.simhash`) and declared canonical from the stored summaries,
forms the clusters with the pages' importance (their LinkRank) and writes
``<work>/linkgraph/<ts>/near_duplicates.npz`` beside ``scores.npz``; the search pipeline
folds each cluster into one result (``ranking.core.scoring.near_folding``) and the admin
lists the clusters with their canonical.

The rule (:func:`form_clusters`): two pages are near-duplicates when their SimHashes are at
most ``k`` bits apart (:data:`DEFAULT_DISTANCE`) and their titles share the first word (the title key, tuned on the
labelled pairs: generated documentation gives pages about different items one template).
Pages are taken in canonical order — first those another
page of the crawl names as its ``rel=canonical`` (by how many name them), then by importance,
then by url — and each page joins the cluster of the first page before it whose fingerprint is
within ``k`` bits of its own (a cluster's members are all within ``k`` bits of its canonical:
no chains of small steps that drift away), or starts a cluster of its own. A cluster is
kept when it has two pages or more; its first page is its canonical. Every page is in one
cluster at most. Pages across hosts cluster as pages of one host do (the report counts both).

File format ``near_duplicates`` version 1, an ``.npz`` (no pickles), written atomically:
``url_hash`` (uint64, sorted, the member urls' :func:`indexer.core.urls.url_hash`),
``cluster`` (int32, the cluster of each), ``url`` (the member urls, same order),
``canonical`` (int64, per cluster: the row of its canonical), ``size`` (int32, per cluster),
``meta`` (JSON: ``k``, counts).
"""

from __future__ import annotations

import json
import logging
import os
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.core.errors import CorruptGraphError, GraphNotFound
from indexer.core.files.storage import atomic_stream, fsync_dir
from indexer.core.runtime.reloading import ReloadingFile, SharedPerPath
from indexer.core.signals.near_index import NearIndex
from indexer.core.signals.simhash import NO_SIMHASH
from indexer.core.urls import hashes_of, host_of

logger = logging.getLogger(__name__)

FORMAT = "near_duplicates"
FORMAT_VERSION = 1
FILE_NAME = "near_duplicates.npz"
# bits. Manku et al.'s and Stract's threshold is 3; on the labelled pairs of the local web
# (bench/near_duplicates_bench.py) SimHash with equal title keys reaches precision 0.86 at 3
# bits and 1.00 at 1 bit (recall 0.40 and 0.19): the largest distance with precision >= 0.90
DEFAULT_DISTANCE = 1


@dataclass(frozen=True, slots=True)
class PageSignature:
    """What clustering needs of one page: its url, SimHash, the ``rel=canonical`` it declares
    ("" when none), its importance (LinkRank; larger is more important) and its title key
    (:func:`indexer.core.signals.simhash.title_key`)."""

    url: str
    simhash: int
    canonical: str = ""
    importance: float = 0.0
    title_key: str = ""


@dataclass(frozen=True, slots=True)
class Cluster:
    """One cluster: its canonical url first, then the other members in canonical order."""

    urls: tuple[str, ...]

    @property
    def canonical(self) -> str:
        return self.urls[0]

    @property
    def cross_host(self) -> bool:
        return len({host_of(u) for u in self.urls}) > 1


def canonical_order(pages: Sequence[PageSignature]) -> list[int]:
    """Positions of ``pages`` in canonical order (see the module)."""
    declared = Counter(p.canonical for p in pages if p.canonical and p.canonical != p.url)
    return sorted(range(len(pages)), key=lambda i: (-declared.get(pages[i].url, 0),
                                                    -pages[i].importance, pages[i].url))


def form_clusters(pages: Sequence[PageSignature], k: int = DEFAULT_DISTANCE) -> list[Cluster]:
    """The clusters of two pages or more (see the module's rule), largest first. A url that
    appears twice counts once (its first signature)."""
    seen: set[str] = set()
    unique = []
    for page in pages:
        if page.url not in seen and page.simhash != NO_SIMHASH:
            seen.add(page.url)
            unique.append(page)
    indexes: dict[str, NearIndex] = {}  # one per title key: near-duplicates share it
    leaders: dict[str, list[str]] = {}
    for i in canonical_order(unique):
        page = unique[i]
        index = indexes.setdefault(page.title_key, NearIndex(k))
        near = index.nearest(page.simhash)
        if near is None:
            index.add(page.simhash, page.url)
            leaders[page.url] = [page.url]
        else:
            leaders[near[0]].append(page.url)
    clusters = [Cluster(tuple(urls)) for urls in leaders.values() if len(urls) > 1]
    clusters.sort(key=lambda c: (-len(c.urls), c.canonical))
    return clusters


def write_clusters(path: str | os.PathLike[str], clusters: Sequence[Cluster],
                   meta: dict[str, Any] | None = None) -> Path:
    """Write ``clusters`` to ``path`` atomically (the module's format)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    urls = [u for c in clusters for u in c.urls]
    cluster_of = np.repeat(np.arange(len(clusters), dtype=np.int32),
                           [len(c.urls) for c in clusters]).astype(np.int32)
    hashes = hashes_of(urls) if urls else np.zeros(0, dtype=np.uint64)
    order = np.argsort(hashes, kind="stable")
    first_row = np.cumsum([0] + [len(c.urls) for c in clusters])[:-1].astype(np.int64)
    row_of = np.empty(len(urls), dtype=np.int64)
    row_of[order] = np.arange(len(urls), dtype=np.int64)
    counts = {"clusters": len(clusters), "pages": len(urls),
              "folded": len(urls) - len(clusters),
              "cross_host": sum(1 for c in clusters if c.cross_host)}
    arrays = {
        "format": np.array(FORMAT), "version": np.array(FORMAT_VERSION, dtype=np.int64),
        "url_hash": hashes[order], "cluster": cluster_of[order],
        "url": np.array([urls[i] for i in order.tolist()], dtype=str),
        "canonical": row_of[first_row] if clusters else np.zeros(0, dtype=np.int64),
        "size": np.array([len(c.urls) for c in clusters], dtype=np.int32),
        "meta": np.array(json.dumps({**counts, **(meta or {})}, sort_keys=True)),
    }
    atomic_stream(path, lambda handle: np.savez(handle, **arrays))
    fsync_dir(path.parent)
    return path


class NearDuplicateClusters:
    """Read-only clusters of one crawl, with vectorised lookup by url hash. Immutable after
    opening (shared by threads). Raises :class:`~indexer.core.errors.GraphNotFound` for a
    missing file, :class:`~indexer.core.errors.CorruptGraphError` for a bad one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if str(data["format"]) != FORMAT or int(data["version"]) > FORMAT_VERSION:
                    raise CorruptGraphError(self.path, "not a near-duplicates file it can read")
                self.url_hash: npt.NDArray[np.uint64] = data["url_hash"]
                self.cluster: npt.NDArray[np.int32] = data["cluster"]
                self.urls: npt.NDArray[np.str_] = data["url"]
                self.canonical_row: npt.NDArray[np.int64] = data["canonical"]
                self.size: npt.NDArray[np.int32] = data["size"]
                self.meta: dict[str, Any] = json.loads(str(data["meta"]))
        except FileNotFoundError as exc:
            raise GraphNotFound(f"no near-duplicate clusters at {self.path}") from exc
        except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise CorruptGraphError(self.path, f"unreadable: {exc}") from exc
        n, c = self.url_hash.shape[0], self.size.shape[0]
        if self.cluster.shape != (n,) or self.urls.shape != (n,) or \
                self.canonical_row.shape != (c,) or int(self.size.sum()) != n or \
                (n > 1 and not bool(np.all(self.url_hash[1:] > self.url_hash[:-1]))) or \
                (c and (int(self.canonical_row.max()) >= n or int(self.cluster.max()) >= c)):
            raise CorruptGraphError(self.path, "arrays are inconsistent")

    def __len__(self) -> int:
        """Number of clusters."""
        return int(self.size.shape[0])

    def lookup(self, url_hashes: npt.ArrayLike) -> tuple[npt.NDArray[np.int64],
                                                         npt.NDArray[np.bool_]]:
        """For each url hash: its cluster (-1 when in none) and whether it is the cluster's
        canonical."""
        wanted = np.asarray(url_hashes, dtype=np.uint64)
        if self.url_hash.shape[0] == 0:
            return np.full(wanted.shape[0], -1, np.int64), np.zeros(wanted.shape[0], bool)
        pos = np.minimum(np.searchsorted(self.url_hash, wanted), self.url_hash.shape[0] - 1)
        found = self.url_hash[pos] == wanted
        cluster = np.where(found, self.cluster[pos], -1).astype(np.int64)
        canonical = found & (self.canonical_row[np.maximum(cluster, 0)] == pos)
        return cluster, canonical

    def members(self, cluster: int) -> list[str]:
        """The urls of ``cluster``: its canonical first, then the others by url."""
        if not 0 <= cluster < len(self):
            return []
        rows = np.flatnonzero(self.cluster == cluster)
        head = int(self.canonical_row[cluster])
        rest = sorted(str(self.urls[r]) for r in rows.tolist() if r != head)
        return [str(self.urls[head]), *rest]

    def canonical(self, cluster: int) -> str:
        return str(self.urls[int(self.canonical_row[cluster])]) if 0 <= cluster < len(self) \
            else ""

    def cluster_of(self, url: str) -> int:
        """The cluster of ``url``, -1 when in none."""
        return int(self.lookup(hashes_of([url]))[0][0])


class CachedNearDuplicates(ReloadingFile[NearDuplicateClusters]):
    """A crawl's clusters file, loaded once per version (the link analysis replaces it by a
    rename). :meth:`get` never raises: no file (no link analysis yet) gives None quietly; an
    unreadable one is logged once per version and gives None (no folding)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, NearDuplicateClusters, errors=(GraphNotFound, CorruptGraphError))

    def failed(self, exc: BaseException) -> str | None:
        if isinstance(exc, GraphNotFound):
            return None
        logger.error("near-duplicate clusters unusable: %s; results are not folded", exc)
        return str(exc)


cached_near_duplicates = SharedPerPath(CachedNearDuplicates)
"""The process-wide :class:`CachedNearDuplicates` of a path."""
