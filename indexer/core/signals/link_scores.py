"""ScoreUpdater's output (seed 002, "Nutch's new scoring and indexing framework"): per-crawl
link scores keyed by url hash, :class:`LinkScores` to read them, and :func:`link_score`, what
they add to a document's importance.

Layer: ``indexer.core``, below its users: written by link analysis (``linkgraph.core``, the
``score_update`` command) from a scored web graph; read by the search pipeline (a document
boost beside Doc Rank), by the queue servers (importance order of the index, anchor-text
boosts) and by the fetchers (crawl priority) through :class:`LinkScores`.

File: ``<work>/linkgraph/<crawl timestamp>/scores.npz`` (see
:func:`indexer.core.runtime.workdir.scores_path`),
an uncompressed numpy ``.npz`` written atomically (temp + fsync + rename). zip members carry a
CRC-32 that numpy checks when it reads them. Members:

* ``format`` (``"linkscores"``) and ``version`` (int, currently 1): checked on open;
* ``url_hash``: ``uint64[n]``, ascending and unique (hash8 of the url, big-endian);
* ``linkrank``: ``float64[n]``, the LinkRank probability (sums to 1 over the graph);
* ``linkrank_relative``: ``float64[n]``, ``linkrank * n`` (1.0 = an average page; independent
  of the graph's size, the natural input of a boost);
* ``trust``: ``float64[n]``, signed trust from the seed policies (``linkgraph.core.trust``);
* ``inlinks``/``outlinks``: ``int32[n]`` link counts;
* ``meta``: a JSON string (crawl timestamp, graph generation, LinkRank settings...; its
  ``version`` names this file's contents: a fetcher compares it with the one its queue server
  announces, ``crawler.machines.score_delivery``);
* optional, the redirect table (:func:`write_scores` with ``redirects``): ``redirect_target``,
  ``uint64[k]`` ascending, the url hash of each redirect target whose representative is one of
  the urls redirecting to it, and that url as UTF-8 in ``redirect_source`` (``uint8``, all of
  them joined) at ``redirect_offsets`` (``int64[k + 1]``). A file without it is read as
  before (:attr:`LinkScores.has_redirect_table` False).

Which url of a redirect pair a result shows (seed 002's BasicFields, :func:`representative_urls`):
the one with the higher link score. The analysis, which reads every shard's redirects, decides
it once for the whole crawl and writes it into the redirect table; a shard then attaches it to
the summaries it answers with (:meth:`LinkScores.representatives`), so that a name server with
no scores file and no redirect documents of its own shows the same urls as one machine.

The anchor-text boost of a link document (:func:`anchor_boost`): ``1 + log10(1 + relative
LinkRank)`` of its source page.

Importance of a url (:func:`link_score`): ``log10(1 + linkrank_relative) + trust``, 0 for a
url the graph does not know; ``ranking.core.scoring.formulas`` says why it is on Doc Rank's scale.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..errors import CorruptGraphError, GraphFormatTooNew, GraphNotFound, LinkGraphError
from ..files.storage import atomic_stream, fsync_dir
from ..runtime.reloading import ReloadingFile, SharedPerPath
from ..urls import as_hash_array, hashes_of, url_hash

logger = logging.getLogger(__name__)

FORMAT = "linkscores"
FORMAT_VERSION = 1
FIELDS = ("linkrank", "linkrank_relative", "trust", "inlinks", "outlinks")


class ScoredGraph(Protocol):
    """What :func:`write_scores` reads of a web graph (``linkgraph.core.graph.WebGraph``):
    per node, in ascending url-hash order."""

    url_hash: npt.NDArray[np.uint64]
    score: npt.NDArray[np.float64]
    trust: npt.NDArray[np.float64]

    @property
    def n(self) -> int: ...

    @property
    def in_count(self) -> npt.NDArray[np.int64]: ...

    @property
    def out_count(self) -> npt.NDArray[np.int64]: ...


def link_score(linkrank_relative: npt.ArrayLike, trust: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``log10(1 + linkrank_relative) + trust`` per document (see the module docstring)."""
    lr = np.maximum(np.asarray(linkrank_relative, dtype=np.float64), 0.0)
    return np.log10(1.0 + lr) + np.asarray(trust, dtype=np.float64)


def anchor_boost(linkrank_relative: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``1 + log10(1 + linkrank_relative)``: how much a link document's anchor text weighs,
    by its source page's relative LinkRank (1 for a url the graph does not know; applied by
    :mod:`indexer.core.partition.anchors`)."""
    lr = np.maximum(np.asarray(linkrank_relative, dtype=np.float64), 0.0)
    return 1.0 + np.log10(1.0 + lr)


ScoreLookup = Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.float64]]


@dataclass(frozen=True, slots=True)
class Representative:
    url: str  # the url to display
    orig_url: str  # the other one (kept as the "original url" of the document)
    url_score: float
    orig_score: float

    def as_dict(self) -> dict[str, Any]:
        """What a result's explanation shows (``representative_url``) and a shard sends with
        a summary."""
        return {"url": self.url, "orig_url": self.orig_url, "url_score": self.url_score,
                "orig_score": self.orig_score}


def representative_urls(pairs: Sequence[tuple[str, str]],
                        scores_for: ScoreLookup) -> list[Representative]:
    """For each (url, redirect target) pair, the url with the higher link score is displayed.

    ``scores_for`` is a vectorised lookup by url hash, e.g. ``LinkScores(path).scores_for``.
    On a tie (both unknown, say) the redirect target is kept: it is the url that serves the
    content. One lookup for all pairs.
    """
    if not pairs:
        return []
    hashes = hashes_of([u for pair in pairs for u in pair])
    values = np.asarray(scores_for(hashes), dtype=np.float64).reshape(-1, 2)
    out = []
    for (url, target), (s_url, s_target) in zip(pairs, values.tolist(), strict=True):
        if s_url > s_target:
            out.append(Representative(url, target, s_url, s_target))
        else:
            out.append(Representative(target, url, s_target, s_url))
    return out


def representative_url(url: str, redirect: str, scores_for: ScoreLookup) -> Representative:
    """:func:`representative_urls` for one pair."""
    return representative_urls([(url, redirect)], scores_for)[0]


def write_scores(path: str | os.PathLike[str], graph: ScoredGraph,
                 meta: dict[str, Any] | None = None,
                 redirects: Mapping[str, str] | None = None) -> Path:
    """Write the scores of every node of ``graph`` to ``path`` (atomically); with
    ``redirects`` (url -> the location it redirects to, every shard's), the redirect table
    (:func:`redirect_table`). ``meta`` gets a fresh random ``version`` unless it has one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = graph.n
    meta = {"version": secrets.token_hex(8), **(meta or {})}
    arrays = {
        "format": np.array(FORMAT), "version": np.array(FORMAT_VERSION, dtype=np.int64),
        "url_hash": np.asarray(graph.url_hash, dtype=np.uint64),
        "linkrank": np.asarray(graph.score, dtype=np.float64),
        "linkrank_relative": np.asarray(graph.score, dtype=np.float64) * n,
        "trust": np.asarray(graph.trust, dtype=np.float64),
        "inlinks": graph.in_count.astype(np.int32),
        "outlinks": graph.out_count.astype(np.int32),
        "meta": np.array(json.dumps(meta, sort_keys=True)),
    }
    if redirects is not None:
        arrays.update(redirect_table(graph, redirects))
    atomic_stream(path, lambda handle: np.savez(handle, **arrays))
    fsync_dir(path.parent)
    return path


def redirect_table(graph: ScoredGraph, redirects: Mapping[str, str]
                   ) -> dict[str, npt.NDArray[Any]]:
    """The redirect table's members: for each redirect target, the url redirecting to it
    with the highest LinkRank when that is higher than the target's own (on a tie the
    target is kept, as :func:`representative_urls` keeps it; among sources of one score the
    first in string order). Urls the graph does not know score 0."""
    pairs = [(u, t) for u, t in redirects.items() if u and t and u != t]
    if not pairs:
        return {"redirect_target": np.zeros(0, np.uint64),
                "redirect_source": np.zeros(0, np.uint8),
                "redirect_offsets": np.zeros(1, np.int64)}
    sources = [u for u, _ in pairs]
    source_hash, target_hash = hashes_of(sources), hashes_of([t for _, t in pairs])
    known = np.asarray(graph.url_hash, dtype=np.uint64)
    score = np.asarray(graph.score, dtype=np.float64)

    def scores_of(hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.float64]:
        if not known.size:
            return np.zeros(hashes.size)
        pos = np.minimum(np.searchsorted(known, hashes), known.size - 1)
        return np.where(known[pos] == hashes, score[pos], 0.0)

    s_source, s_target = scores_of(source_hash), scores_of(target_hash)
    keep = np.flatnonzero(s_source > s_target)
    name_rank = np.argsort(np.argsort(np.array(sources, dtype=object)[keep], kind="stable"),
                           kind="stable")
    order = keep[np.lexsort((name_rank, -s_source[keep], target_hash[keep]))]
    first = np.ones(order.size, dtype=bool)
    first[1:] = target_hash[order][1:] != target_hash[order][:-1]
    chosen = order[first]
    encoded = [sources[i].encode("utf-8", "surrogatepass") for i in chosen.tolist()]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return {"redirect_target": target_hash[chosen].astype(np.uint64),
            "redirect_source": np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(),
            "redirect_offsets": offsets}


def receive_scores(read: Callable[[int], bytes], length: int,
                   path: str | os.PathLike[str], crawl: int | None = None) -> int:
    """Install a scores file sent by the machine that computed it (``length`` bytes from
    ``read(size)``) at ``path``: written to a temporary file beside it, fsynced, opened and
    checked as a :class:`LinkScores` of crawl ``crawl``, and only then renamed over ``path``,
    so a reader sees the old file or the new one and a bad upload changes nothing.

    Returns the number of urls; raises :class:`.errors.CorruptGraphError` for a short, bad or
    foreign file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".upload", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            left = length
            while left > 0:
                chunk = read(min(left, 1 << 20))
                if not chunk:
                    raise CorruptGraphError(path, f"the upload ended {left} bytes early")
                handle.write(chunk)
                left -= len(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        scores = LinkScores(tmp)
        sent_for = scores.meta.get("crawl")
        if crawl is not None and sent_for is not None and int(sent_for) != int(crawl):
            raise CorruptGraphError(path, f"the file holds the scores of crawl {sent_for}")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return len(scores)


class LinkScores:
    """Read-only link scores of one crawl, with vectorised lookup by url hash.

    Loads the whole file at open (16-40 bytes a node); immutable afterwards, so one instance
    can be shared by threads. Open a new one to see a newer file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if str(data["format"]) != FORMAT:
                    raise CorruptGraphError(self.path, "not a link scores file")
                version = int(data["version"])
                if version > FORMAT_VERSION:
                    raise GraphFormatTooNew(self.path, f"format version {version} is newer "
                                                       f"than {FORMAT_VERSION}")
                self.url_hash: npt.NDArray[np.uint64] = data["url_hash"]
                self._fields = {name: data[name] for name in FIELDS}
                self.meta: dict[str, Any] = json.loads(str(data["meta"]))
                table = ("redirect_target", "redirect_source", "redirect_offsets")
                self._redirects = tuple(data[m] for m in table) \
                    if all(m in data.files for m in table) else None
        except FileNotFoundError as exc:
            raise GraphNotFound(f"no link scores at {self.path}") from exc
        except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise CorruptGraphError(self.path, f"unreadable: {exc}") from exc
        n = self.url_hash.shape[0]
        if any(a.shape != (n,) for a in self._fields.values()):
            raise CorruptGraphError(self.path, "arrays differ in length")
        if n > 1 and not bool(np.all(self.url_hash[1:] > self.url_hash[:-1])):
            raise CorruptGraphError(self.path, "url hashes are not sorted")
        if self._redirects is not None:
            targets, blob, offsets = self._redirects
            if offsets.shape != (targets.shape[0] + 1,) or int(offsets[0]) != 0 \
                    or int(offsets[-1]) != blob.shape[0] or np.any(np.diff(offsets) < 0) \
                    or np.any(targets[1:] <= targets[:-1]):
                raise CorruptGraphError(self.path, "the redirect table is malformed")

    @property
    def version(self) -> str | None:
        """What names this file's contents (its meta's ``version``; None in an older file)."""
        value = self.meta.get("version")
        return None if value is None else str(value)

    @property
    def has_redirect_table(self) -> bool:
        """Whether the analysis wrote its redirect table into the file (an older file, or one
        written without the crawl's redirects, has none)."""
        return self._redirects is not None

    def representatives(self, urls: Sequence[str]) -> list[Representative | None]:
        """For each url shown, the url redirecting to it that the redirect table names as
        its representative (with both urls' relative LinkRank), else None: the url itself is
        shown. One vectorised lookup; None for every url without a table."""
        out: list[Representative | None] = [None] * len(urls)
        if self._redirects is None or not urls or not self._redirects[0].size:
            return out
        targets, blob, offsets = self._redirects
        wanted = hashes_of(list(urls))
        pos = np.minimum(np.searchsorted(targets, wanted), targets.size - 1)
        hit = np.flatnonzero(targets[pos] == wanted)
        if not hit.size:
            return out
        sources = [bytes(blob[offsets[p]:offsets[p + 1]]).decode("utf-8", "surrogatepass")
                   for p in pos[hit].tolist()]
        values = self.scores_for(np.concatenate([hashes_of(sources), wanted[hit]]))
        for k, (i, source) in enumerate(zip(hit.tolist(), sources, strict=True)):
            out[i] = Representative(source, urls[i], float(values[k]),
                                    float(values[len(sources) + k]))
        return out

    def __len__(self) -> int:
        return int(self.url_hash.shape[0])

    def positions(self, url_hashes: Any) -> npt.NDArray[np.int64]:
        """Row of each url hash in the file, -1 where the url is unknown."""
        wanted = as_hash_array(url_hashes)
        if len(self) == 0:
            return np.full(wanted.shape[0], -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.url_hash, wanted), len(self) - 1)
        return np.where(self.url_hash[pos] == wanted, pos, -1).astype(np.int64)

    def scores_for(self, url_hashes: Any, field: str = "linkrank_relative",
                   default: float = 0.0) -> npt.NDArray[np.float64]:
        """One score per url hash (``default`` for urls the graph does not know).

        ``url_hashes``: ``uint64`` integers, 8-byte strings (dtype ``S8``), or an ``(k, >=8)``
        ``uint8`` array such as doc ids (the first 8 bytes are the url hash). ``field``: one of
        ``linkrank``, ``linkrank_relative`` (default), ``trust``, ``inlinks``, ``outlinks``.
        """
        if field not in self._fields:
            raise ValueError(f"unknown score field {field!r}; one of {', '.join(FIELDS)}")
        pos = self.positions(url_hashes)
        values = self._fields[field].astype(np.float64)
        out = np.full(pos.shape[0], float(default))
        found = pos >= 0
        out[found] = values[pos[found]]
        return out

    def score_of(self, url: str, field: str = "linkrank_relative", default: float = 0.0) -> float:
        return float(self.scores_for(np.array([url_hash(url)], dtype=np.uint64), field,
                                     default)[0])


class CachedLinkScores(ReloadingFile[LinkScores]):
    """A crawl's ``scores.npz``, loaded once per version of the file (the rule of
    :mod:`indexer.core.runtime.reloading`: the link-analysis job replaces the file by a rename,
    so every new version is noticed at the next search, without a restart): what the search
    pipeline reads on every query.

    :meth:`get` never raises. A missing file is the normal state of a crawl whose link
    analysis has not run yet: it gives ``None`` and logs nothing. An unreadable file is logged
    as an error once per version of the file (not once per query) and gives ``None``, so
    search goes on without the link boost. Thread-safe; share one instance per path through
    :func:`cached_link_scores`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, LinkScores, errors=(LinkGraphError,))

    def loaded(self, value: LinkScores) -> None:
        logger.info("link scores loaded: %s (%d urls)", self.path, len(value))

    def failed(self, exc: BaseException) -> str | None:
        if isinstance(exc, GraphNotFound):
            logger.debug("no link scores yet at %s; searching without the link boost", self.path)
            return None  # not yet computed: normal, not an error
        logger.error("link scores unusable: %s; searching without the link boost "
                     "until link analysis writes the file again", exc)
        return str(exc)


cached_link_scores = SharedPerPath(CachedLinkScores)
"""The process-wide :class:`CachedLinkScores` of a path (one load per file version, however
many searchers are built)."""
