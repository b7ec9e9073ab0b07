"""The seed's common phrases, from a crawl's own titles and anchor texts: counted over a
bundle, and the phrase lexicon file with its reader.

Layer: ``indexer.core`` (reads bundles, analyses text), below its writers and its reader: built
by each queue server for its own shard once its index is ordered by importance
(``crawler.core.queue_server.index_order``) and by the ``build_phrases`` command for a whole crawl; read by
``ranking.core.shard.local.LocalShard`` through :class:`CachedPhraseLexicon`, which scores the bonus
with ``ranking.core.scoring.formulas.in_order_counts`` and ``common_phrase_bonus``.

"Yioop Search Engine Ranking Mechanisms": "If the sequence of words is particularly common,
that is common enough to have a Wikipedia page, Yioop will try to return results which have
that string with the same word order." We have no Wikipedia; a crawl names its own subjects
in its page titles and in the anchor texts of its links (headings are not stored apart from
the rest of a page's text today, so titles and anchors are the sources). A *common phrase* is
a run of 2 to :data:`MAX_TERMS` consecutive index terms (analysed and stemmed as the index
is, :class:`indexer.core.text.TextAnalyzer`, in the text's language) that occurs in at least
``min_count`` (:data:`DEFAULT_MIN_COUNT` = 2) of those texts:

* contiguous parts count, not only whole texts: a title is mostly several phrases joined by
  separators ("Quickstart — Flask Documentation (3.0.x)"), and a subject such as "request
  context" appears inside longer titles and anchors ("The Request Context", "Request context
  lifetime"), as a Wikipedia title appears inside running text. The texts are first cut at
  separators (``| — – · • » ( ) [ ] { } < > ; ! ?``, and ``: , .`` or `` - `` between
  spaces), so that no phrase spans two parts of a title;
* runs holding a stop word are left out: the query parser drops the stop words among a
  query's loose words (``ranking.core.query.parser``; both read
  :meth:`indexer.core.text.TextAnalyzer.stop_terms`), and a dropped stop word ends a run there
  too, so such a phrase could never be asked for;
* a text counts a phrase once however often it holds it; two texts suffice (K = 2): a
  crawl is small next to Wikipedia, a phrase used as two titles or anchors is already a name
  the site gives something, and a phrase seen once is as likely an accident of one title.

File: ``<bundle>/phrases.npz`` (:func:`indexer.core.runtime.workdir.phrases_path`), beside the index
it was built from (each shard reads its own, so a remote queue server needs its copy), an
uncompressed numpy ``.npz`` written atomically (temp + fsync + rename; zip members carry CRC-32s
numpy checks):

* ``format`` (``"phrases"``) and ``version`` (int, currently 1): checked on open;
* ``hashes``: ``uint64[n]``, ascending and unique: :func:`phrase_hash` of each phrase;
* ``counts``: ``uint32[n]``, the number of texts holding it; ``lengths``: ``uint8[n]``, terms;
* ``meta``: a JSON string (``min_count``, ``texts`` read, ``documents`` read, bundles).

A 64-bit hash can collide, making a rare run look common: at a million phrases the chance
that a given query run collides is about 5e-14, and the cost of one is a small bonus.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..files.storage import atomic_stream, fsync_dir
from ..runtime.reloading import ReloadingFile
from ..text import TextAnalyzer

logger = logging.getLogger(__name__)

FORMAT = "phrases"
FORMAT_VERSION = 1
MIN_TERMS = 2
MAX_TERMS = 4
DEFAULT_MIN_COUNT = 2

HashArray = npt.NDArray[np.uint64]
IntArray = npt.NDArray[np.int64]

_SEPARATORS = re.compile(r"[|\u2014\u2013\u00b7\u2022\u00bb\u00ab()\[\]{}<>;!?]"
                         r"|[:,.](?:\s|$)|\s-\s")


class PhraseLexiconError(Exception):
    """A phrases file that cannot be used (missing, unreadable, or of a newer format)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


def phrase_hash(terms: Sequence[str]) -> int:
    """The 64-bit hash of a run of index terms (terms never hold white space)."""
    digest = hashlib.blake2b(" ".join(terms).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def text_phrases(text: str, lang: str | None, analyzer: TextAnalyzer,
                 stop: frozenset[str]) -> set[tuple[str, ...]]:
    """The candidate phrases of one title or anchor text: its runs of ``MIN_TERMS`` to
    ``MAX_TERMS`` consecutive terms within one separator-free part, none a stop word."""
    out: set[tuple[str, ...]] = set()
    for part in _SEPARATORS.split(text):
        terms = analyzer.terms(part, lang) if part.strip() else []
        run: list[str] = []
        for term in [*terms, ""]:  # "" flushes the last run
            if term and term not in stop:
                run.append(term)
                continue
            for n in range(MIN_TERMS, min(MAX_TERMS, len(run)) + 1):
                out.update(tuple(run[i:i + n]) for i in range(len(run) - n + 1))
            run = []
    return out


@dataclass(slots=True)
class PhraseCounts:
    """How many texts hold each candidate phrase, for one shard or merged over several
    (:meth:`merge`): what a queue server could send to the machine that builds a crawl's
    lexicon. Arrays sorted by hash, hashes unique."""

    hashes: HashArray = field(default_factory=lambda: np.zeros(0, np.uint64))
    counts: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    lengths: npt.NDArray[np.uint8] = field(default_factory=lambda: np.zeros(0, np.uint8))
    texts: int = 0
    documents: int = 0

    @staticmethod
    def of(hashes: HashArray, counts: IntArray, lengths: npt.NDArray[np.uint8],
           texts: int = 0, documents: int = 0) -> PhraseCounts:
        """Counts from unsorted, possibly repeated hashes (their counts add up)."""
        unique, first, inverse = np.unique(np.asarray(hashes, dtype=np.uint64),
                                           return_index=True, return_inverse=True)
        total = np.bincount(inverse.ravel(), weights=np.asarray(counts, dtype=np.float64),
                            minlength=unique.size).astype(np.int64)
        return PhraseCounts(unique, total, np.asarray(lengths, dtype=np.uint8)[first],
                            texts, documents)

    @staticmethod
    def merge(parts: Iterable[PhraseCounts]) -> PhraseCounts:
        parts = list(parts)
        if not parts:
            return PhraseCounts()
        return PhraseCounts.of(np.concatenate([p.hashes for p in parts]),
                               np.concatenate([p.counts for p in parts]),
                               np.concatenate([p.lengths for p in parts]),
                               sum(p.texts for p in parts), sum(p.documents for p in parts))

    def lexicon(self, min_count: int = DEFAULT_MIN_COUNT,
                meta: dict[str, Any] | None = None) -> PhraseLexicon:
        """The phrases held by at least ``min_count`` texts."""
        if min_count < 1:
            raise ValueError(f"min_count must be at least 1, not {min_count}")
        keep = self.counts >= min_count
        info = {"min_count": int(min_count), "texts": self.texts, "documents": self.documents,
                **(meta or {})}
        return PhraseLexicon(self.hashes[keep], self.counts[keep].astype(np.uint32),
                             self.lengths[keep], info)


@dataclass(frozen=True, slots=True)
class PhraseLexicon:
    """A crawl's common phrases as sorted 64-bit hashes. Immutable; shareable by threads."""

    hashes: HashArray
    counts: npt.NDArray[np.uint32]
    lengths: npt.NDArray[np.uint8]
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.hashes.size)

    def contains(self, hashes: Sequence[int] | HashArray) -> npt.NDArray[np.bool_]:
        """Whether each hash is a common phrase (one vectorised lookup)."""
        wanted = np.asarray(hashes, dtype=np.uint64)
        if not self.hashes.size:
            return np.zeros(wanted.shape, dtype=bool)
        at = np.minimum(np.searchsorted(self.hashes, wanted), self.hashes.size - 1)
        return self.hashes[at] == wanted

    def count_of(self, terms: Sequence[str]) -> int:
        """How many titles and anchor texts hold the phrase (0: not a common phrase)."""
        h = np.uint64(phrase_hash(terms))
        at = int(np.searchsorted(self.hashes, h))
        return int(self.counts[at]) if at < self.hashes.size and self.hashes[at] == h else 0

    def phrases_in(self, runs: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
        """The common phrases of a query: in each run of adjacent query words
        (:attr:`ranking.core.query.parser.Conjunct.runs`), its sub-runs of 2 to ``MAX_TERMS`` words
        that are common phrases, leaving out those inside a longer one found; distinct, in
        query order."""
        found: list[tuple[str, ...]] = []
        for run in runs:
            run = tuple(run)
            spans = [(i, n) for n in range(MIN_TERMS, min(MAX_TERMS, len(run)) + 1)
                     for i in range(len(run) - n + 1)]
            if not spans:
                continue
            hit = self.contains([phrase_hash(run[i:i + n]) for i, n in spans])
            kept = [(i, n) for (i, n), ok in zip(spans, hit.tolist(), strict=True) if ok]
            for i, n in sorted(kept):
                inside = any(j <= i and i + n <= j + m and m > n for j, m in kept)
                if not inside and run[i:i + n] not in found:
                    found.append(run[i:i + n])
        return found

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the lexicon to ``path`` atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {"format": np.array(FORMAT),
                  "version": np.array(FORMAT_VERSION, dtype=np.int64),
                  "hashes": np.asarray(self.hashes, dtype=np.uint64),
                  "counts": np.asarray(self.counts, dtype=np.uint32),
                  "lengths": np.asarray(self.lengths, dtype=np.uint8),
                  "meta": np.array(json.dumps(self.meta, sort_keys=True))}
        atomic_stream(path, lambda handle: np.savez(handle, **arrays))
        fsync_dir(path.parent)
        return path

    @staticmethod
    def load(path: str | os.PathLike[str]) -> PhraseLexicon:
        """Read and check a lexicon file; raises :class:`PhraseLexiconError`."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["format"]) != FORMAT:
                    raise PhraseLexiconError(path, "not a phrases file")
                version = int(data["version"])
                if version > FORMAT_VERSION:
                    raise PhraseLexiconError(path, f"format version {version} is newer than "
                                                   f"{FORMAT_VERSION}")
                hashes = data["hashes"].astype(np.uint64)
                counts = data["counts"].astype(np.uint32)
                lengths = data["lengths"].astype(np.uint8)
                meta = json.loads(str(data["meta"]))
        except FileNotFoundError as exc:
            raise PhraseLexiconError(path, "no phrases file") from exc
        except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise PhraseLexiconError(path, f"unreadable: {exc}") from exc
        if counts.shape != hashes.shape or lengths.shape != hashes.shape:
            raise PhraseLexiconError(path, "arrays differ in length")
        if hashes.size > 1 and not bool(np.all(hashes[1:] > hashes[:-1])):
            raise PhraseLexiconError(path, "hashes are not sorted")
        return PhraseLexicon(hashes, counts, lengths, meta if isinstance(meta, dict) else {})


class CachedPhraseLexicon(ReloadingFile[PhraseLexicon]):
    """A bundle's ``phrases.npz``, loaded once per version of the file (the rule of
    :mod:`indexer.core.runtime.reloading`). :meth:`get` never raises: without a file (the
    normal state before the first build) it gives None quietly; an unusable file is logged
    once per version of the file and gives None, so search goes on without the phrase bonus.
    Thread-safe; owned by the shard that reads the bundle."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, PhraseLexicon.load, errors=(PhraseLexiconError,))

    def loaded(self, value: PhraseLexicon) -> None:
        logger.info("common phrases loaded: %s (%d phrases)", self.path, len(value))

    def failed(self, exc: BaseException) -> str | None:
        logger.warning("common phrases unusable: %s; searching without the phrase "
                       "bonus (run `manage.py build_phrases` again)", exc)
        return str(exc)
