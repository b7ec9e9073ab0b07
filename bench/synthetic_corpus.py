"""A synthetic web for the scale benchmark (bench/scale_bench.py): pages as the crawler
indexes them, generated from a fixed seed, so every run and every machine sees the same corpus.

* Vocabulary: word of rank ``r`` (0 = most frequent) is a made-up word of 2 to 6 syllables
  (consonant + ``a``/``o``, ending in a vowel), one spelling per rank. The engine's English
  analyser leaves such words as they are (no stemming, no stop words), so a query names
  exactly the term the index holds. Word ranks follow a Zipf-Mandelbrot law,
  ``p(r) ~ (r + ZIPF_Q) ** -ZIPF_S``, bounded at ``VOCABULARY`` ranks: about 5 % of running
  words are the most frequent word, and the number of distinct words keeps growing with the
  corpus (Heaps' law) instead of stopping at a fixed list.
* Document lengths: log-normal words per page (median ``MEDIAN_WORDS``), a title of 2 to 10
  words, the description = the first ``DESCRIPTION_WORDS`` words of the text.
* Hosts: consecutive pages share a host; host sizes follow a Pareto law (most hosts a few pages,
  a few hosts thousands). The first page of a host is its root ``/``.
* Links: log-normal out-degree (median ``MEDIAN_LINKS``, at most the crawler's 50 kept links),
  ``INTERNAL_LINKS`` of them within the host (a quarter of those to its root), the rest to
  pages drawn by a Zipf law over all ``total`` pages (in-degree follows a power law), each with
  1 to 4 words of anchor text.

Page ``i``'s text depends only on the seed and ``i`` (a corpus of 100,000 pages is the first
100,000 of the 1,000,000 one); its links also on ``total`` (they point into the corpus).
:func:`page_document` turns a page into the engine's own page document through the crawler's
code (``crawler.core.processing.indexing``, ``crawler.core.processing.meta_words``): the meta words,
fancy hits, region weights and stored summary (with the whole text as ``body``, as the default Page
Options store it) of a real crawl. The crawler's link documents (one per outlink with anchor
text) and cached copies of pages are not made: the corpus counts pages.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from crawler.core.processing.config import MAX_LINKS_PER_PAGE, PageProcessingConfig
from crawler.core.processing.indexing import iter_index_documents
from crawler.core.processing.meta_words import page_meta_words
from crawler.core.processing.page import Link, ProcessedPage
from indexer.core.documents.document import IndexDocument
from indexer.core.ids import hash8
from indexer.core.text import TextAnalyzer

SEED = 20  # issue 20
SYLLABLES = tuple(c + v for c in "bdfgklmnprtvz" for v in "ao")
VOCABULARY = 100_000_000
ZIPF_S = 1.5
ZIPF_Q = 10.0
MEDIAN_WORDS = 300
SIGMA_WORDS = 0.9
MIN_WORDS, MAX_WORDS = 30, 6000
DESCRIPTION_WORDS = 30
MEDIAN_LINKS = 20
INTERNAL_LINKS = 0.4
HOST_PARETO = 1.1  # Lomax shape of host sizes (mean about 10 x HOST_SCALE pages)
HOST_SCALE = 5
MAX_HOST_PAGES = 50_000
FETCHED_AT = 1_700_000_000.0
CACHED_WORDS = 200_000  # spellings of the most frequent ranks kept in memory
TLDS = (".com", ".org", ".net", ".de", ".io")
QUERY_KINDS = ("one_word", "two_words", "three_words", "phrase")  # query_mix's order


def spell(rank: int) -> str:
    """The word of ``rank``: its bijective base-26 digits (at least two) as syllables."""
    n = rank + len(SYLLABLES)
    out = []
    while n:
        n, d = divmod(n, len(SYLLABLES))
        out.append(SYLLABLES[d])
    return "".join(reversed(out))


_WORDS = [spell(r) for r in range(CACHED_WORDS)]


def word(rank: int) -> str:
    return _WORDS[rank] if rank < CACHED_WORDS else spell(rank)


def zipf_ranks(rng: np.random.Generator, n: int, s: float = ZIPF_S, q: float = ZIPF_Q,
               size: int = VOCABULARY) -> np.ndarray:
    """``n`` ranks in ``0 .. size-1`` with ``p(r) ~ (r + q) ** -s``, by inverting the
    continuous law's distribution function (exact enough for a benchmark, and no table)."""
    u = rng.random(n)
    a, b = q ** (1 - s), (size + q) ** (1 - s)
    x = (a + (b - a) * u) ** (1 / (1 - s)) - q
    return np.minimum(x.astype(np.int64), size - 1)


class HostTable:
    """Which host each page of the first ``total`` pages is on: Pareto host sizes drawn from
    the seed, so the first pages' hosts do not depend on ``total``."""

    def __init__(self, total: int, seed: int = SEED) -> None:
        rng = np.random.default_rng((seed, 1))
        starts = [0]
        while starts[-1] < total:
            sizes = 1 + np.minimum(rng.pareto(HOST_PARETO, 4096) * HOST_SCALE,
                                   MAX_HOST_PAGES - 1).astype(np.int64)
            starts.extend((starts[-1] + np.cumsum(sizes)).tolist())
        self.starts = np.array(starts, dtype=np.int64)

    def host_of(self, page: int) -> int:
        return int(np.searchsorted(self.starts, page, side="right")) - 1

    def span(self, host: int) -> tuple[int, int]:
        return int(self.starts[host]), int(self.starts[host + 1])

    @staticmethod
    def name(host: int) -> str:
        return f"www.{spell(host * 7919 % 10_000_000)}{TLDS[host % len(TLDS)]}"

    def url(self, page: int) -> str:
        host = self.host_of(page)
        first, _ = self.span(host)
        path = "/" if page == first else f"/{word(page % 97)}/{page - first}.html"
        return f"https://{self.name(host)}{path}"


@dataclass(frozen=True, slots=True)
class Page:
    """One synthetic page: its url, host, words (title first) and outlinks."""

    number: int
    url: str
    host: str
    words: tuple[str, ...]
    title_len: int
    links: tuple[Link, ...]


class Corpus:
    """The first ``total`` pages of the synthetic web (see the module)."""

    def __init__(self, total: int, seed: int = SEED) -> None:
        self.total = total
        self.seed = seed
        self.hosts = HostTable(total, seed)

    def page_words(self, number: int) -> tuple[tuple[str, ...], int]:
        """(words of page ``number``, title first; the title's length): seed and page only."""
        rng = np.random.default_rng((self.seed, 2, number))
        n = int(min(MAX_WORDS, max(MIN_WORDS, rng.lognormal(math.log(MEDIAN_WORDS),
                                                             SIGMA_WORDS))))
        title = int(rng.integers(2, 11))
        return tuple(word(r) for r in zipf_ranks(rng, title + n).tolist()), title

    def page_links(self, number: int) -> tuple[Link, ...]:
        rng = np.random.default_rng((self.seed, 3, number))
        count = int(min(MAX_LINKS_PER_PAGE, rng.lognormal(math.log(MEDIAN_LINKS), 0.8)))
        first, end = self.hosts.span(self.hosts.host_of(number))
        internal = rng.random(count) < INTERNAL_LINKS
        to_root = rng.random(count) < 0.25
        inside = rng.integers(first, end, count)
        popular = zipf_ranks(rng, count, s=1.1, q=1.0, size=self.total) * 2_654_435_761 \
            % self.total
        anchors = zipf_ranks(rng, 4 * count)
        sizes = rng.integers(1, 5, count)
        links: dict[str, Link] = {}
        for k in range(count):
            target = (first if to_root[k] else int(inside[k])) if internal[k] \
                else int(popular[k])
            if target == number:
                continue
            url = self.hosts.url(target)
            text = " ".join(word(int(r)) for r in anchors[4 * k:4 * k + int(sizes[k])])
            links.setdefault(url, Link(url, text, "a", 1.0))
        return tuple(links.values())

    def page(self, number: int) -> Page:
        words, title_len = self.page_words(number)
        url = self.hosts.url(number)
        return Page(number, url, url.split("/")[2], words, title_len, self.page_links(number))

    def pages(self, shard: int = 0, shards: int = 1) -> Iterator[Page]:
        """Pages ``0 .. total-1`` of shard ``shard`` of ``shards`` (split by host, as the crawl
        splits urls between queue servers)."""
        for number in range(self.total):
            if shards == 1 or self.hosts.host_of(number) % shards == shard:
                yield self.page(number)


_CONFIG = PageProcessingConfig()
_ANALYZER = TextAnalyzer()


def page_document(page: Page) -> IndexDocument:
    """The page document a crawl would index for ``page`` (crawler.core.processing.indexing)."""
    positions: dict[str, list[int]] = {}
    for i, w in enumerate(page.words):
        positions.setdefault(w, []).append(i)
    n = len(page.words)
    title = " ".join(page.words[:page.title_len])
    body = " ".join(page.words[page.title_len:])
    description = " ".join(page.words[page.title_len:page.title_len + DESCRIPTION_WORDS])
    regions = ((page.title_len - 1, _CONFIG.title_weight), (n - 1, 1.0))
    size = len(body) + len(title) + 200
    meta = page_meta_words(url=page.url, host=page.host, status=200, mime_type="text/html",
                           lang="en", media="text", safe=True, fetched_at=FETCHED_AT,
                           links=[link.url for link in page.links], size=size)
    processed = ProcessedPage(
        url=page.url, status=200, mime_type="text/html", encoding="utf-8", lang="en",
        title=title, description=description,
        terms={t: tuple(p) for t, p in positions.items()}, length=n, region_weights=regions,
        links=page.links, robot_metas=frozenset(), meta_words=meta,
        content_hash=hash8(page.url + "|" + body), host=page.host, body=body, size=size,
        fetched_at=FETCHED_AT)
    return next(iter_index_documents(processed, _ANALYZER))


def query_mix(corpus: Corpus, per_kind: int = 50, seed: int = SEED,
              sample_pages: int = 2000) -> list[str]:
    """A fixed mix of ``4 * per_kind`` queries, ``per_kind`` of each of :data:`QUERY_KINDS` in
    that order: one, two and three words, and two- or three-word phrases. Each word is frequent (rank below 1,000) or rare (a word of rank 10,000
    or more taken from one of the first ``sample_pages`` pages, so it occurs at every size),
    half and half; phrases are runs of words of those pages (quoted). Depends only on the
    seed, not on the corpus size."""
    rng = np.random.default_rng((seed, 4))
    pages = min(sample_pages, corpus.total)
    frequent = [word(r) for r in range(1000)]
    rare: list[str] = []
    texts = []
    for number in rng.choice(pages, size=min(pages, 200), replace=False).tolist():
        words, _ = corpus.page_words(number)
        texts.append(words)
        rare.extend(w for w in words if w not in _RANKS_BELOW_10K)
    rare = sorted(set(rare))

    def term() -> str:
        pool = frequent if rng.random() < 0.5 else rare
        return pool[int(rng.integers(len(pool)))]

    queries = [" ".join(term() for _ in range(k)) for k in (1, 2, 3) for _ in range(per_kind)]
    for _ in range(per_kind):
        words = texts[int(rng.integers(len(texts)))]
        k = int(rng.integers(2, 4))
        start = int(rng.integers(len(words) - k))
        queries.append('"' + " ".join(words[start:start + k]) + '"')
    return queries


_RANKS_BELOW_10K = frozenset(_WORDS[:10_000])
