"""Word Suggest: query completions and "did you mean" from the index's own words.

Layer: glue of the ``ranking`` app (no Django imports; ``views.py`` passes
``settings.WORK_DIRECTORY`` and the bundles the index locator found).

Why a lexicon file. The dictionary of a bundle maps term *ids* (hashes) to postings, so it cannot
be listed or completed; the words behind the terms are only found in what the index stores in
clear: the summaries (title and description of every page, anchor text of every link
document). A crawl's lexicon is built from those summaries:

* every summary of the crawl's bundles is read (evenly sampled down to ``MAX_DOCUMENTS`` on a
  big crawl); its title and description are split into words (lower-cased, letters only,
  2 to 30 characters); a word counts once per document (document frequency);
* the ``MAX_WORDS`` most frequent words are kept, and only those whose analysed term really is
  in the bundle's dictionary (``term_stats(term).docs > 0``): a suggestion always finds
  something, and a word the summarizer kept but the index dropped is never offered;
* the result is written to ``WORK_DIRECTORY/suggest/lexicon<its>.tsv`` (a signature line of the
  bundles' file times, then ``word<TAB>count`` sorted by word) and kept in memory per process.

It is built lazily by the first request that needs it, or ahead of time with
``manage.py build_suggest_lexicon``; while a crawl is still growing, a stale file is rebuilt at
most every ``REBUILD_AFTER`` seconds. Completions are the most frequent words with the typed
prefix (binary search in the sorted word list); corrections are the most frequent lexicon word
within edit distance 1 (words up to 4 letters) or 2, found through an index of one-letter
deletions (the symmetric-delete method) and checked with a real Damerau-Levenshtein distance.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import math
import os
import re
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.errors import CorruptIndexError
from indexer.core.text import TextAnalyzer
from ranking.core.query.numerals import is_ascii_digits

from .indexes import BundleLocation, bundle_signature

logger = logging.getLogger(__name__)

MAX_DOCUMENTS = 50_000
MAX_WORDS = 30_000
REBUILD_AFTER = 600.0  # seconds between rebuilds of a growing crawl's lexicon
MAX_WORD_CHARS = 30  # lexicon words are 2 to 30 letters
_WORD = re.compile(rf"[^\W\d_]{{2,{MAX_WORD_CHARS}}}")
_QUERY_TOKEN = re.compile(r'-?"[^"]*"?|[^\s"]+')
_PLAIN_WORD = re.compile(r"[^\W\d_]+")


def damerau(a: str, b: str, limit: int) -> int:
    """Restricted Damerau-Levenshtein distance of ``a`` and ``b``; ``limit + 1`` as soon as it
    must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


class Lexicon:
    """Words of one crawl with their document frequencies."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts
        self.words = sorted(counts)
        self._deleted: dict[str, list[str]] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word.lower() in self.counts

    def complete(self, prefix: str, k: int = 8) -> list[str]:
        """The ``k`` most frequent words starting with ``prefix`` (the prefix itself included
        when it is a word)."""
        prefix = prefix.lower()
        if not prefix:
            return []
        lo = bisect.bisect_left(self.words, prefix)
        hi = bisect.bisect_left(self.words, prefix + "\U0010ffff", lo)
        found = self.words[lo:hi]
        found.sort(key=lambda w: (-self.counts[w], w))
        return found[:k]

    def _delete_index(self) -> dict[str, list[str]]:
        with self._lock:
            if self._deleted is None:
                index: dict[str, list[str]] = {}
                for word in self.words:
                    index.setdefault(word, []).append(word)
                    for d in _deletes(word):
                        index.setdefault(d, []).append(word)
                self._deleted = index
            return self._deleted

    def correct(self, word: str) -> str | None:
        """The most frequent lexicon word closest to ``word`` (None when ``word`` is a word of
        the lexicon or nothing is close)."""
        word = word.lower()
        limit = 1 if len(word) <= 4 else 2
        # a word more than two edits longer than the longest lexicon word is never close; its
        # deletes would cost the cube of its length (a 1,000-letter CJK run took seconds)
        if word in self.counts or not 3 <= len(word) <= MAX_WORD_CHARS + limit:
            return None
        index = self._delete_index()
        keys = {word} | _deletes(word)
        if limit > 1:
            keys |= {d2 for d in list(keys) for d2 in _deletes(d)}
        candidates = {c for key in keys for c in index.get(key, ())}
        best: tuple[int, int, str] | None = None
        for c in candidates:
            d = damerau(word, c, limit)
            if d > limit:
                continue
            rank = (d, -self.counts[c], c)
            if best is None or rank < best:
                best = rank
        return best[2] if best else None

    def suggest_queries(self, query: str, k: int = 8) -> list[str]:
        """Completions of the last word of ``query``, each the whole query."""
        if not query or query[-1].isspace():
            return []
        head, _, last = query.rpartition(" ")
        if not _PLAIN_WORD.fullmatch(last):
            return []
        start = f"{head} " if head else ""
        return [start + w for w in self.complete(last, k) if w != last.lower()][:k] or \
            ([start + last.lower()] if last.lower() in self.counts and head else [])

    def did_you_mean(self, query: str, known: Callable[[str], bool] = lambda w: False
                     ) -> str | None:
        """The query with its unknown words corrected, or None when nothing changes. Meta
        words, phrases, negations and words ``known`` says the index has are kept."""
        changed = False
        out = []
        for token in _QUERY_TOKEN.findall(query):
            if _PLAIN_WORD.fullmatch(token) and token.lower() not in self.counts \
                    and not known(token):
                fixed = self.correct(token)
                if fixed:
                    out.append(fixed)
                    changed = True
                    continue
            out.append(token)
        return " ".join(out) if changed else None


# -- building ------------------------------------------------------------------------------


def words_of(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text or "")}


def count_words(readers: Sequence[IndexBundleReader], max_documents: int = MAX_DOCUMENTS
                ) -> tuple[Counter[str], dict[str, str]]:
    """Document frequency of the words of stored titles and descriptions, and the language
    of the first summary each word was seen in (to analyse it as the index did)."""
    ids: list[tuple[IndexBundleReader, bytes]] = []
    for reader in readers:
        for part in reader.partitions:
            dm = reader.doc_map(part.number)
            ids.extend((reader, dm.member_ids[i].tobytes()) for i in range(dm.member_ids.shape[0]))
    step = max(1, math.ceil(len(ids) / max_documents))
    counts: Counter[str] = Counter()
    langs: dict[str, str] = {}
    for reader, doc_id in ids[::step]:
        try:
            summary = reader.summary(doc_id) or {}
        except CorruptIndexError as exc:  # one damaged record costs only its own words
            logger.warning("summary of %s unreadable: %s", doc_id.hex(), exc)
            continue
        title = summary.get("title", "")
        if title == summary.get("url"):
            title = ""  # a link document's title is its target url
        words = words_of(f"{title} {summary.get('description', '')}")
        counts.update(words)
        lang = str(summary.get("lang") or "en")
        for w in words:
            langs.setdefault(w, lang)
    return counts, langs


def build_counts(readers: Sequence[IndexBundleReader], max_words: int = MAX_WORDS,
                 max_documents: int = MAX_DOCUMENTS) -> dict[str, int]:
    """The lexicon's words: the most frequent stored words that are terms of the index."""
    analyzer = TextAnalyzer()
    counts, langs = count_words(readers, max_documents)
    kept: dict[str, int] = {}
    for word, count in counts.most_common():
        if len(kept) >= max_words:
            break
        terms = analyzer.query_terms(word, langs.get(word, "en"))
        if terms and all(any(r.term_stats(t).docs > 0 for r in readers) for t in terms):
            kept[word] = count
    return kept


def signature(bundles: Iterable[BundleLocation]) -> str:
    digest = hashlib.sha1()
    for b in sorted(bundles, key=lambda b: str(b.path)):
        digest.update(f"{b.path}:{bundle_signature(b.path)}".encode())
    return digest.hexdigest()


def lexicon_path(work_directory: str | os.PathLike[str], its: int) -> Path:
    return Path(work_directory) / "suggest" / f"lexicon{its}.tsv"


def write_lexicon(path: Path, sig: str, counts: dict[str, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(f"# signature {sig}\n")
        for word in sorted(counts):
            out.write(f"{word}\t{counts[word]}\n")
    os.replace(tmp, path)


def read_lexicon(path: Path) -> tuple[str, dict[str, int]]:
    counts: dict[str, int] = {}
    sig = ""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("# signature "):
                sig = line[12:].strip()
                continue
            word, _, count = line.rstrip("\n").partition("\t")
            if word and is_ascii_digits(count):
                counts[word] = int(count)
    return sig, counts


def build_lexicon_file(work_directory: str | os.PathLike[str], its: int,
                       bundles: Sequence[BundleLocation]) -> tuple[Path, int]:
    """Build and write the lexicon of crawl ``its``; (its path, number of words)."""
    sig = signature(bundles)
    readers = []
    try:
        for b in bundles:
            readers.append(IndexBundleReader(b.path))
        counts = build_counts(readers)
    finally:
        for r in readers:
            r.close()
    path = lexicon_path(work_directory, its)
    write_lexicon(path, sig, counts)
    return path, len(counts)


class LexiconCache:
    """One loaded lexicon per crawl in this process, loaded from (or built into) its file.
    The bundles' signature is checked at most every ``REBUILD_AFTER`` seconds; a changed
    crawl's lexicon is rebuilt when its file is older than that."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # path -> (signature, checked at, lexicon)
        self._loaded: dict[Path, tuple[str, float, Lexicon]] = {}

    def get(self, work_directory: str | os.PathLike[str], its: int,
            bundles: Sequence[BundleLocation]) -> Lexicon:
        path = lexicon_path(work_directory, its)
        with self._lock:
            now = time.time()
            hit = self._loaded.get(path)
            if hit is not None and now - hit[1] < REBUILD_AFTER:
                return hit[2]
            sig = signature(bundles)
            if hit is not None and hit[0] == sig:
                self._loaded[path] = (sig, now, hit[2])
                return hit[2]
            stored, counts = "", {}
            if path.exists():
                try:
                    stored, counts = read_lexicon(path)
                except (OSError, UnicodeDecodeError):
                    stored, counts = "", {}
                fresh = now - path.stat().st_mtime < REBUILD_AFTER
                if stored == sig or (fresh and counts):
                    lexicon = Lexicon(counts)
                    self._loaded[path] = (stored, now, lexicon)
                    return lexicon
            started = time.perf_counter()
            try:
                build_lexicon_file(work_directory, its, bundles)
                stored, counts = read_lexicon(path)
            except (OSError, CorruptIndexError, ValueError):
                logger.warning("cannot build the suggestion lexicon of crawl %s", its,
                               exc_info=True)
                lexicon = Lexicon(counts)
                self._loaded[path] = (sig, now, lexicon)
                return lexicon
            logger.info("suggestion lexicon of crawl %s: %d words in %.2fs", its, len(counts),
                        time.perf_counter() - started)
            lexicon = Lexicon(counts)
            self._loaded[path] = (stored, now, lexicon)
            return lexicon

    def clear(self) -> None:
        with self._lock:
            self._loaded.clear()
