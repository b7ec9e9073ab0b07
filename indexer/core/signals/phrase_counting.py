"""Counting a bundle's common-phrase candidates, each finished partition counted once.

Layer: ``indexer.core`` (below the queue server's orderer and the ``build_phrases`` command).
The lexicon (:mod:`.phrases`) counts, over the titles of a bundle's pages and the anchor texts
of its link documents, how many texts hold each candidate phrase. A queue server rebuilds it
after every link analysis of its crawl (``crawler.core.queue_server.index_order``), in its
own loop: read whole, that is every summary of the bundle each time (85,000 summaries and
about 2.5 s of CPU on the default tier; tens of seconds a time on a crawl of millions of
documents, while no schedule is handed out). A finished partition's documents never change
(a re-order only moves them), so each one's phrase hashes are worked out once and kept in
``<bundle>/phrase_cache/partition_N.npz``; a count reads the cache of every finished partition
and analyses only the partitions that have none yet (the active one every time).

Cache file (uncompressed ``.npz``, written atomically; a file that cannot be read, of another
``version``, or whose doc ids are not the partition's ones, is worked out again and replaced):

* ``version``: :data:`CACHE_VERSION` with the phrases' ``MIN_TERMS`` and ``MAX_TERMS``
  (a change of the text analysis must raise :data:`CACHE_VERSION`);
* ``ids``: ``uint8[m, 24]``, each page, link and redirect doc id of the partition once;
* ``texts``: ``bool[m]``, whether it has a text that was counted (a title or anchor text);
* ``counts``: ``int64[m]``, how many distinct candidate phrases that text holds;
* ``hashes`` (``uint64``) and ``lengths`` (``uint8``): those phrases, text after text.

Contract: :func:`count_bundle_phrases` gives exactly the counts of reading every summary of the
bundle, each doc id once in the newest partition holding it.
"""

from __future__ import annotations

import logging
import os
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..bundle.layout import read_partition_manifest
from ..bundle.member_scan import partition_member_summaries
from ..bundle.reader import IndexBundleReader
from ..files.storage import atomic_stream
from ..ids import DOC_ID_LEN, DOC_TYPE, DocType
from ..runtime.workdir import phrases_path
from ..text import TextAnalyzer
from .phrases import (
    DEFAULT_MIN_COUNT,
    MAX_TERMS,
    MIN_TERMS,
    PhraseCounts,
    PhraseLexicon,
    phrase_hash,
    text_phrases,
)

logger = logging.getLogger(__name__)

CACHE_DIR = "phrase_cache"
CACHE_VERSION = 1
# distinct (text, language) pairs whose phrases are remembered while a partition is analysed: a
# site's navigation anchors ("index", "modules", "next") repeat on every page
_MEMO_TEXTS = 100_000


@dataclass(frozen=True, slots=True)
class PartitionPhrases:
    """The candidate phrases of one partition's texts, one row per doc id (see the module)."""

    ids: npt.NDArray[np.uint8]
    texts: npt.NDArray[np.bool_]
    counts: npt.NDArray[np.int64]
    hashes: npt.NDArray[np.uint64]
    lengths: npt.NDArray[np.uint8]

    def id_list(self) -> list[bytes]:
        raw = self.ids.tobytes()
        return [raw[i:i + DOC_ID_LEN] for i in range(0, len(raw), DOC_ID_LEN)]


def count_bundle_phrases(bundle: IndexBundleReader | str | os.PathLike[str],
                         analyzer: TextAnalyzer | None = None,
                         progress: Callable[[int], None] | None = None) -> PhraseCounts:
    """The phrase counts of one bundle: the title of every page document and the anchor
    text (``description``) of every link document, each in its stored language; each doc id
    once, in the newest partition holding it. ``progress`` is called with the number of
    documents read so far after each partition."""
    analyzer = analyzer or TextAnalyzer()
    if isinstance(bundle, IndexBundleReader):
        return _count_reader(bundle, analyzer, progress)
    with IndexBundleReader(bundle) as reader:
        return _count_reader(reader, analyzer, progress)


def _count_reader(reader: IndexBundleReader, analyzer: TextAnalyzer,
                  progress: Callable[[int], None] | None) -> PhraseCounts:
    seen: set[bytes] = set()
    hashes, lengths = [], []
    texts = documents = 0
    for part in reversed(reader.partitions):  # newest first
        phrases = partition_phrases(reader, part.number, analyzer)
        ids = phrases.id_list()
        keep = np.fromiter((doc_id not in seen for doc_id in ids), dtype=bool, count=len(ids))
        seen.update(ids)
        documents += int(keep.sum())
        texts += int((keep & phrases.texts).sum())
        held = np.repeat(keep, phrases.counts)
        hashes.append(phrases.hashes[held])
        lengths.append(phrases.lengths[held])
        if progress is not None:
            progress(documents)
    if not hashes:
        return PhraseCounts()
    flat = np.concatenate(hashes)
    return PhraseCounts.of(flat, np.ones(flat.size, dtype=np.int64), np.concatenate(lengths),
                           texts, documents)


def partition_phrases(reader: IndexBundleReader, number: int,
                      analyzer: TextAnalyzer) -> PartitionPhrases:
    """Partition ``number``'s phrases: from its cache when that holds exactly its doc ids,
    else worked out (and cached when the partition is finished)."""
    path = reader.path / CACHE_DIR / f"partition_{number}.npz"
    cached = _load(path)
    if cached is not None and _same_ids(cached.ids, reader.doc_map(number).member_ids):
        return cached
    made = _analyse(reader, number, analyzer)
    manifest = read_partition_manifest(reader.path, number)
    if manifest is not None and manifest.get("state") == "closed":
        _save(path, made)
    return made


def _same_ids(cached: npt.NDArray[np.uint8], members: npt.NDArray[np.uint8]) -> bool:
    """Whether the cache's ids are the partition's page, link and redirect ids (as sets)."""
    wanted = members[members[:, DOC_TYPE] <= DocType.LOCATION]
    mine = np.unique(np.ascontiguousarray(wanted).view(f"V{DOC_ID_LEN}").ravel())
    theirs = np.unique(np.ascontiguousarray(cached).view(f"V{DOC_ID_LEN}").ravel())
    return mine.size == theirs.size and bool(np.all(mine == theirs))


def _analyse(reader: IndexBundleReader, number: int,
             analyzer: TextAnalyzer) -> PartitionPhrases:
    """Read every summary of the partition and find the phrases of its texts."""
    memo: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
    ids: list[bytes] = []
    has_text: list[bool] = []
    counts: list[int] = []
    hashes: list[int] = []
    lengths: list[int] = []
    for doc_type, doc_id, summary in partition_member_summaries(reader, number):
        ids.append(doc_id)
        text = ""
        if doc_type != DocType.LOCATION and summary:  # a redirect has no title of its own
            text = str((summary.get("description") if doc_type == DocType.LINK
                        else summary.get("title")) or "")
        has_text.append(bool(text))
        if not text:
            counts.append(0)
            continue
        # the crawler's default language when a summary names none (as its processor does)
        key = (text, str(summary.get("lang") or "en"))  # type: ignore[union-attr]
        found = memo.get(key)
        if found is None:
            phrases = text_phrases(text, key[1], analyzer, analyzer.stop_terms(key[1]))
            found = ([phrase_hash(p) for p in phrases], [len(p) for p in phrases])
            if len(memo) >= _MEMO_TEXTS:
                memo.clear()
            memo[key] = found
        counts.append(len(found[0]))
        hashes.extend(found[0])
        lengths.extend(found[1])
    return PartitionPhrases(
        np.frombuffer(b"".join(ids), dtype=np.uint8).reshape(len(ids), DOC_ID_LEN),
        np.array(has_text, dtype=bool), np.array(counts, dtype=np.int64),
        np.array(hashes, dtype=np.uint64), np.array(lengths, dtype=np.uint8))


def _version() -> npt.NDArray[np.int64]:
    return np.array([CACHE_VERSION, MIN_TERMS, MAX_TERMS], dtype=np.int64)


def _load(path: Path) -> PartitionPhrases | None:
    """A partition's cache, or None when it is missing, unreadable or of another version."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if not np.array_equal(data["version"], _version()):
                return None
            return PartitionPhrases(data["ids"], data["texts"], data["counts"],
                                    data["hashes"], data["lengths"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        logger.warning("phrase cache %s not used (worked out again): %s", path, exc)
        return None


def _save(path: Path, phrases: PartitionPhrases) -> None:
    """Write a partition's cache atomically (a failure is logged: the next count works the
    partition out again)."""
    arrays = {"version": _version(), "ids": phrases.ids, "texts": phrases.texts,
              "counts": phrases.counts, "hashes": phrases.hashes, "lengths": phrases.lengths}
    try:
        path.parent.mkdir(exist_ok=True)
        atomic_stream(path, lambda handle: np.savez(handle, **arrays))
    except OSError as exc:
        logger.warning("phrase cache %s not written: %s", path, exc)


def build_phrase_lexicon(sources: Iterable[IndexBundleReader | str | os.PathLike[str]],
                         min_count: int = DEFAULT_MIN_COUNT,
                         analyzer: TextAnalyzer | None = None,
                         progress: Callable[[int], None] | None = None) -> PhraseLexicon:
    """The common phrases of a crawl: the phrases held by at least ``min_count`` titles and
    anchor texts over every bundle of ``sources`` (readers or bundle folders, e.g. one per
    queue server)."""
    analyzer = analyzer or TextAnalyzer()
    parts: list[PhraseCounts] = []
    done = 0
    for source in sources:
        step = None if progress is None else (lambda n, base=done: progress(base + n))
        parts.append(count_bundle_phrases(source, analyzer, step))
        done += parts[-1].documents
    return PhraseCounts.merge(parts).lexicon(min_count, {"bundles": len(parts)})


def write_crawl_phrases(bundles: Sequence[str | os.PathLike[str]],
                        min_count: int = DEFAULT_MIN_COUNT,
                        progress: Callable[[int], None] | None = None) -> PhraseLexicon:
    """Build the lexicon of the crawl whose bundle folders are ``bundles`` and write it
    into each of them (:func:`phrases_path`)."""
    lexicon = build_phrase_lexicon(bundles, min_count, progress=progress)
    for bundle in bundles:
        lexicon.save(phrases_path(bundle))
    return lexicon
