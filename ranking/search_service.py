"""The search service: which shards a search reads, and the caches kept between searches.

Layer: Django glue of the ``ranking`` app. The views (:mod:`ranking.views`, :mod:`ranking.api`)
parse the request (:mod:`ranking.params`), call one :class:`SearchService` and render what it
returns. The service reads the Search Time options and the list of remote queue servers
(:mod:`ranking.selectors`), finds the crawl's bundles on this machine (:mod:`ranking.indexes`),
and runs :class:`ranking.core.search.pipeline.Searcher` over local bundles in-process and remote
queue servers over HTTP through the network iterator (``docs/architecture.md``, the data flow
of a query).

One service per process, created by the app (:class:`ranking.apps.RankingConfig`) and found
with :func:`search_service`. It owns every cache of the search side: the open bundle readers,
the spelling lexicons, the remote shard clients and the searchers (each at most ``KEPT``), and
the options and remote list read from the database (at most every ``SEARCH_OPTIONS_TTL``
seconds). Its methods are safe to call from several request threads.

Who may read what: every method that reads a crawl asked for by timestamp (``its``) or a mix
by name takes ``staff``; without it (an anonymous or non-staff request), a crawl or mix that
is not open to anyone (:func:`searchindex.selectors.crawl_open_to_anyone`) is answered as one
that does not exist (:class:`NoIndexError`, saying "open to anonymous search"), whether it
exists or not. The index chosen for search is open to anyone, and so is the newest index on
disk while none is chosen (a search without ``its`` reads it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError

from crawler.selectors import ConfigNotFound, crawl_pages_count
from indexer.core.errors import CorruptIndexError
from indexer.core.shard_token import shard_bearer
from indexer.core.text import TextAnalyzer
from ranking.core.errors import NoIndexError, ShardError, public_reason
from ranking.core.options import SearchOptions
from ranking.core.query.parser import QueryParser
from ranking.core.remote.client import RemoteShard
from ranking.core.search.curation import Curation, edited_text, place_pins
from ranking.core.search.explain import relevance_share
from ranking.core.search.messages import SearchMessage
from ranking.core.search.mixes import MixedShard, unwrap
from ranking.core.search.pipeline import Searcher, SearchResult
from ranking.core.search.relax import search_with_fallback
from ranking.core.semantic.rerank import default_semantic
from ranking.core.shard.candidates import ShardClient
from ranking.core.shard.local import LocalShard
from searchindex.selectors import (
    NEWEST_ON_DISK,
    IndexChoice,
    crawl_mix_get,
    crawl_open_to_anyone,
    search_index_get,
)

from .indexes import ReaderPool, locate_index
from .page import StoredPage, find_stored_page
from .params import SearchParams, effective_query
from .searchpage.appearance import Look, appearance_get
from .searchpage.news import NewsFacts, news_search, news_shard
from .selectors import curation_get, remote_queue_server_urls, search_options_get
from .semantic_model import model_embedder
from .suggest import LexiconCache
from .totals import Reach, indexed_pages, look_ahead_size, reach

logger = logging.getLogger(__name__)
KEPT = 32  # remote shards and searchers kept per process (each its own key)
SHARD_TIMEOUT = 5.0
SUGGESTIONS = 8
T = TypeVar("T")


class DatabaseValue(Generic[T]):
    """A value read from the database at most every ``SEARCH_OPTIONS_TTL`` seconds (0: at
    every call); when the read fails, ``fallback()``, not kept."""

    def __init__(self, read: Callable[[], T], fallback: Callable[[], T], what: str) -> None:
        self._read = read
        self._fallback = fallback
        self._what = what
        self._kept: tuple[float, T] | None = None

    def get(self) -> T:
        ttl = float(getattr(settings, "SEARCH_OPTIONS_TTL", 0.0))
        now = time.monotonic()
        kept = self._kept
        if ttl > 0 and kept is not None and now - kept[0] < ttl:
            return kept[1]
        try:
            value = self._read()
        except (ConfigNotFound, DatabaseError):
            logger.warning("%s unavailable, using defaults", self._what, exc_info=True)
            return self._fallback()
        self._kept = (now, value)
        return value

    def clear(self) -> None:
        self._kept = None


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """Which index answered a search, for the page and the JSON answer: its ``label`` (a crawl
    or a crawl mix, named), the crawl ``timestamps`` and the ``pages`` they hold."""

    label: str
    kind: str
    timestamps: tuple[int, ...]
    pages: int

    def as_dict(self) -> dict:
        return {"label": self.label, "kind": self.kind, "crawls": list(self.timestamps),
                "pages": self.pages}


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """What :meth:`SearchService.search` found: the ``result`` of ``params`` over ``shards``
    of crawl ``its`` (the first crawl of a mix), which ``index`` that was (None: none could
    be read), and ``log``, the (query, total, top relevance shares,
    :func:`~ranking.core.search.explain.relevance_share`) to record in the query log once
    the answer is sent (None: this search is not logged). ``reach``: how far paging can go
    from this page (:func:`ranking.totals.reach`; None: not checked, nothing was searched)."""

    params: SearchParams
    result: SearchResult
    its: int | None
    shards: list[ShardClient]
    log: tuple[str, int, list[float]] | None
    index: IndexInfo | None = None
    reach: Reach | None = None
    news: dict[str, NewsFacts] | None = None  # the News tab's source and date by url


class SearchService:
    """Searches of one process, and the caches they share (see the module docstring)."""

    def __init__(self) -> None:
        self.pool = ReaderPool()  # open readers, reopened when a bundle changes
        self.lexicons = LexiconCache()
        self.analyzer = TextAnalyzer()
        self.parser = QueryParser(self.analyzer)
        self._options = DatabaseValue(search_options_get, SearchOptions, "search options")
        self._remote_urls = DatabaseValue(remote_queue_server_urls, tuple,
                                          "the list of remote queue servers")
        self._chosen = DatabaseValue(search_index_get, lambda: NEWEST_ON_DISK,
                                     "the index chosen for search")
        self._curation = DatabaseValue(curation_get, Curation, "curated results")
        self._appearance = DatabaseValue(appearance_get, Look, "the site's appearance")
        self._remote: dict[tuple[str, str, int | None], RemoteShard] = {}
        self._searchers: dict[tuple[tuple[int, ...], SearchOptions], Searcher] = {}
        self._lock = threading.Lock()

    # -- what a search reads ----------------------------------------------------------------

    def options(self) -> SearchOptions:
        """The Search Time options (defaults, not kept, when the database cannot give them)."""
        return self._options.get()

    def appearance(self) -> Look:
        """The site's name, logo and colours (:mod:`ranking.searchpage.appearance`)."""
        return self._appearance.get()

    def hidden_urls(self) -> frozenset[str]:
        """The urls the operator hid from results (curation)."""
        return self._curation.get().hidden

    def forget_options(self, **_: object) -> None:
        """Signal receiver: Page Options, a crawl, a crawl mix, the index chosen for search or
        the appearance changed: read them again."""
        self._options.clear()
        self._appearance.clear()
        self._chosen.clear()
        self._curation.clear()

    def index_choice(self, its: int | None, mix: str | None = None, *,
                     staff: bool = False) -> IndexChoice:
        """What a search reads: crawl mix ``mix`` (NoIndexError when there is none of that
        name), else crawl ``its``, else the index chosen in the admin
        (:func:`searchindex.selectors.search_index_get`). Without ``staff``, a mix or crawl
        not open to anyone raises NoIndexError (see the module docstring)."""
        if mix:
            try:
                choice = crawl_mix_get(mix, anyone=not staff)
            except DatabaseError:
                choice = None
            if choice is None or not choice.parts:
                open_to = "" if staff else " open to anonymous search"
                raise NoIndexError(f"there is no crawl mix named {mix!r} with crawls in it"
                                   f"{open_to}")
            return choice
        if its is not None:
            if not staff and not self._open_to_anyone(its):
                raise NoIndexError(f"there is no crawl {its} open to anonymous search")
            return IndexChoice("crawl", f"crawl {its}", ((its, 1.0),))
        return self._chosen.get()

    def _open_to_anyone(self, its: int) -> bool:
        """Whether anyone may read crawl ``its``: open by the database's rows, or the newest
        index on disk while no index is chosen for search (what a search without ``its``
        reads then, whose results link their cached copies by timestamp)."""
        try:
            if crawl_open_to_anyone(its):
                return True
        except DatabaseError:  # cannot tell: closed, as a crawl that is not public
            logger.warning("could not tell whether crawl %s is public", its, exc_info=True)
            return False
        if self._chosen.get().parts:
            return False
        try:
            return locate_index(settings.WORK_DIRECTORY, None)[0] == its
        except NoIndexError:
            return False

    def shards(self, its: int | None, mix: str | None = None, *, staff: bool = False
               ) -> tuple[int | None, list[ShardClient]]:
        """(crawl timestamp, shards) of :meth:`index_choice`: local bundles, then remote queue
        servers, of each crawl; the shards of a mix's crawls weighted (:class:`MixedShard`),
        its first crawl's timestamp returned. Raises NoIndexError when there is no shard."""
        choice = self.index_choice(its, mix, staff=staff)
        if len(choice.parts) <= 1:
            return self._crawl_shards(choice.parts[0][0] if choice.parts else None)
        first: int | None = None
        shards: list[ShardClient] = []
        for timestamp, weight in choice.parts:
            try:
                chosen, found = self._crawl_shards(timestamp)
            except NoIndexError:
                continue  # a crawl of the mix with no index yet adds nothing
            first = chosen if first is None else first
            shards.extend(MixedShard(s, timestamp, weight) for s in found)
        if not shards:
            raise NoIndexError(f"no crawl of {choice.label} has an index")
        return first, shards

    def index_info(self, its: int | None, mix: str | None, read: int | None, *,
                   staff: bool = False, shards: list[ShardClient] | None = None
                   ) -> IndexInfo | None:
        """The index a search of ``its`` / ``mix`` reads (crawl ``read`` when it is the newest
        on disk), named, with its page count: the page documents of its ``shards`` when they
        are local bundles (:func:`ranking.totals.indexed_pages`), else the crawls' counters
        (None when the database cannot say)."""
        try:
            choice = self.index_choice(its, mix, staff=staff)
            stamps = choice.timestamps or ((read,) if read is not None else ())
            label = choice.label if choice.parts or read is None else \
                f"{choice.label} (crawl {read})"
            pages = indexed_pages(shards) if shards else None
            return IndexInfo(label, choice.kind, stamps,
                             crawl_pages_count(stamps) if pages is None else pages)
        except (NoIndexError, DatabaseError):
            return None

    def _crawl_shards(self, its: int | None) -> tuple[int | None, list[ShardClient]]:
        """(crawl timestamp, shards of crawl ``its`` (None: the newest on disk)): local
        bundles, then remote queue servers. Raises NoIndexError when there is neither."""
        shards: list[ShardClient] = []
        remote = self._remote_urls.get()
        try:
            chosen, bundles = locate_index(settings.WORK_DIRECTORY, its)
            shards.extend(self.pool.shard(b) for b in bundles)
            its = chosen
        except NoIndexError:
            if not remote:
                raise
        token = shard_bearer(str(settings.QUEUE_SERVER_TOKEN))
        shards.extend(self._remote_shard(url, token, its) for url in remote)
        return its, shards

    def local_shard(self, its: int | None, server: int | None) -> LocalShard:
        """The bundle of crawl ``its`` on this machine (of queue server ``server`` if given),
        for the shard API. Raises NoIndexError."""
        _, bundles = locate_index(settings.WORK_DIRECTORY, its)
        if server is not None:
            bundles = [b for b in bundles if b.server == server]
            if not bundles:
                raise NoIndexError(f"queue server {server} has no index for this crawl")
        return self.pool.shard(bundles[0])

    def _remote_shard(self, url: str, token: str, its: int | None) -> RemoteShard:
        """The client of a remote queue server (kept, so that its connections stay open from
        one search to the next)."""
        key = (url, token, its)
        with self._lock:
            shard = self._remote.get(key)
            if shard is None:
                if len(self._remote) >= KEPT:
                    for old in self._remote.values():
                        old.close()
                    self._remote.clear()
                shard = self._remote[key] = RemoteShard(url, token, its=its,
                                                      timeout=SHARD_TIMEOUT)
            return shard

    def searcher(self, shards: list[ShardClient], options: SearchOptions) -> Searcher:
        """A Searcher over ``shards`` with ``options``, kept while both stay the same: its query
        parser keeps what it derives once per language (the stop words' terms, the stemmers).
        A searcher dropped from the cache is closed (:meth:`Searcher.close`)."""
        key = (tuple(id(s) for s in shards), options)
        with self._lock:
            searcher = self._searchers.get(key)
            # the kept searcher holds its shards, so their ids cannot be reused meanwhile
            if searcher is None or not all(a is b for a, b in zip(searcher.shards, shards,
                                                                   strict=True)):
                dropped = [searcher] if searcher is not None else []
                if len(self._searchers) >= KEPT:
                    dropped = list(self._searchers.values())
                    self._searchers.clear()
                for old in dropped:  # release their fan-out threads (a search still running
                    old.close()      # on one starts them again)
                searcher = self._searchers[key] = Searcher(
                    shards, options, analyzer=self.analyzer, shard_timeout=SHARD_TIMEOUT,
                    semantic=default_semantic(shards, model_embedder))
            return searcher

    # -- searching ---------------------------------------------------------------------------

    def search(self, params: SearchParams, options: SearchOptions) -> SearchAnswer:
        """The search ``params`` asks for. A query with no result shows a spelling correction's
        results (unless ``params.forced``) or the pages with most of its words
        (:func:`ranking.core.search.relax.search_with_fallback`); ``result.fallback`` says which,
        ``result.searched`` what was searched. A missing or corrupt index is a message in the
        result. First pages are logged (``log``); a partial match is logged as what it is: no
        page has all the query's words."""
        its, shards = params.its, []
        searched = params.searched
        curation = self._curation.get()
        if curation.hidden or curation.hidden_hosts:
            options = replace(options, hidden_urls=curation.hidden,
                              hidden_hosts=curation.hidden_hosts)
        if params.tab == "news":
            return self._news(params, options, curation)
        try:
            its, shards = self.shards(params.its, params.mix, staff=params.staff)
            correct = None
            if options.show_word_suggest and not params.forced:
                def correct(text: str) -> str | None:
                    lang_of = self.parser.parse(text, safe_search=params.safe).lang
                    fixed = self.did_you_mean(params.query.strip(), its, shards, lang_of)
                    return effective_query(fixed, params.lang) if fixed else None
            searcher = self.searcher(shards, options)
            result = search_with_fallback(searcher, effective_query(params.query, params.lang),
                                          num=params.num, offset=params.offset,
                                          safe_search=params.safe, correct=correct,
                                          count_ahead=look_ahead_size(params.num),
                                          within=params.within_filters)
            result, reached = reach(result, self._counter(searcher, result, params))
        except (NoIndexError, CorruptIndexError) as exc:
            logger.warning("search of %r failed: %s", searched, exc, exc_info=True)
            result = SearchResult(searched, searched, (), 0, 0.0, False,
                                  (SearchMessage.error(public_reason(exc)),),
                                  params.offset, params.num)
            reached = None
        log = None
        if params.offset == 0 and params.num > 0:  # the query log needy-query crawling reads
            # each result's relevance as a share of its query's most (not the fused score)
            partial = result.fallback == "partial"
            log = (params.query, 0 if partial else result.total,
                   [] if partial else [relevance_share(r.explanation) for r in result.results])
        pins = curation.pins_for(params.query) if params.offset == 0 and shards else ()
        if pins:
            result = self._with_pins(result, pins, self.searcher(shards, options), params)
        if curation.edits:
            result = with_edits(result, curation.edits)
        if params.messages:
            result = replace(result, messages=(*map(SearchMessage.notice, params.messages),
                                               *result.messages))
        index = (self.index_info(params.its, params.mix, its, staff=params.staff,
                                 shards=shards) if shards else None)
        return SearchAnswer(params, result, its, shards, log, index, reached)

    def _news(self, params: SearchParams, options: SearchOptions, curation: Curation
              ) -> SearchAnswer:
        """The News tab's search (:mod:`ranking.searchpage.news`): the news index, not a crawl's;
        not logged (the query log is about the crawls' pages)."""
        shards: list[ShardClient] = []
        facts: dict[str, NewsFacts] = {}
        try:
            shard = news_shard(self.pool, settings.WORK_DIRECTORY)
            shards = [shard]
            result, facts = news_search(self.searcher(shards, options), shard, params)
        except (NoIndexError, CorruptIndexError) as exc:
            result = SearchResult(params.searched, params.searched, (), 0, 0.0, False,
                                  (SearchMessage.error(public_reason(exc)),),
                                  params.offset, params.num)
        if curation.edits:
            result = with_edits(result, curation.edits)
        return SearchAnswer(params, result, None, shards, None, news=facts)

    @staticmethod
    def _counter(searcher: Searcher, result: SearchResult, params: SearchParams
                 ) -> Callable[[int, int], int]:
        """How many results the search that gave ``result`` (its correction or relaxed query
        when it fell back) shows from a rank on, at most n: after its page, what that search
        counted ahead (:attr:`SearchResult.ahead`, from the same ranking); from another rank
        (an empty page past the end), a search that reads heads only."""
        query = result.searched or params.searched
        end = result.offset + len(result.results)

        def count_after(offset: int, n: int) -> int:
            if offset == end and result.ahead is not None and n <= look_ahead_size(params.num):
                return min(result.ahead, n)
            return len(searcher.search(query, num=n, offset=offset, snippets=False,
                                       safe_search=params.safe).results)
        return count_after

    @staticmethod
    def _with_pins(result: SearchResult, pins: tuple[tuple[str, int], ...], searcher: Searcher,
                   params: SearchParams) -> SearchResult:
        """``result`` with the query's pinned urls at their positions: a pinned url among the
        results moves, another is found by its ``info:`` meta word (a hidden or unindexed one
        is left out). The query log keeps the results as ranked."""
        found = {r.url: r for r in result.results}
        for url, _ in pins:
            if url not in found and url not in searcher.options.hidden_urls:
                extra = searcher.search(f"info:{url}", num=1, safe_search=params.safe)
                if extra.results:
                    found[url] = extra.results[0]
        results = place_pins(result.results, pins, lambda r: r.url, found, params.num)
        return replace(result, results=tuple(results))

    def crawl_holds_site(self, its: int, host: str, *, staff: bool, safe: bool) -> bool:
        """Whether crawl ``its`` has a page of ``host`` to show (``site:host``), as someone
        (``staff`` or not) may search it; False when it has no index or cannot be read."""
        if not staff and not self._open_to_anyone(its):
            return False
        try:
            _, shards = self._crawl_shards(its)
            found = self.searcher(shards, self.options()).search(
                f"site:{host}", num=1, snippets=False, safe_search=safe)
        except (NoIndexError, CorruptIndexError, ShardError, OSError):
            return False
        return bool(found.results)

    def did_you_mean(self, query: str, its: int | None, shards: list[ShardClient],
                     lang: str = "en") -> str | None:
        """A spelling correction of ``query`` from crawl ``its``'s lexicon, preferring words
        the local shards know (None without local shards or a lexicon)."""
        local = [s for s in map(unwrap, shards) if isinstance(s, LocalShard)]
        if its is None or not local:
            return None
        try:
            _, bundles = locate_index(settings.WORK_DIRECTORY, its)
        except NoIndexError:
            return None
        lexicon = self.lexicons.get(settings.WORK_DIRECTORY, its, bundles)
        if not len(lexicon):
            return None
        return lexicon.did_you_mean(query, self._known_to_index(local, lang))

    def _known_to_index(self, local: list[LocalShard], lang: str) -> Callable[[str], bool]:
        def known(word: str) -> bool:
            terms = self.analyzer.query_terms(word, lang)
            if not terms:
                return False
            for shard in local:
                with shard.lock:
                    if all(shard.reader.term_stats(t).docs > 0 for t in terms):
                        return True
            return False

        return known

    def suggestions(self, query: str, its: int | None, *, staff: bool = False) -> list[str]:
        """Completions of ``query``'s last word from crawl ``its``'s lexicon (default: the
        first crawl of the index chosen for search; none without an index, or for a crawl
        not open to anyone without ``staff``)."""
        if its is None:
            its = next(iter(self._chosen.get().timestamps), None)
        elif not staff and not self._open_to_anyone(its):
            return []
        try:
            chosen, bundles = locate_index(settings.WORK_DIRECTORY, its)
            lexicon = self.lexicons.get(settings.WORK_DIRECTORY, chosen, bundles)
        except NoIndexError:
            return []
        return lexicon.suggest_queries(query.lstrip(), SUGGESTIONS)

    def stored_page(self, url: str, its: int | None, *, staff: bool = False
                    ) -> tuple[int | None, StoredPage | None, list[ShardClient]]:
        """(crawl timestamp, ``url``'s stored page or None, shards) for the cached page view.
        Raises NoIndexError (also for a crawl not open to anyone, without ``staff``)."""
        its, shards = self.shards(its, staff=staff)
        return its, find_stored_page(shards, url), shards


def with_edits(result: SearchResult, edits: dict[str, tuple[str, str]]) -> SearchResult:
    """``result`` with the operator's titles and snippets (curation's results editor) in
    place of the computed ones, for the results they name."""
    changed = []
    for r in result.results:
        edit = edits.get(r.url)
        if edit is None:
            changed.append(r)
            continue
        title, snippet, plain = edited_text(edit, r.title, r.snippet)
        changed.append(replace(r, title=title, snippet=snippet,
                               plain_title=plain or r.plain_title))
    return replace(result, results=tuple(changed))


def search_service() -> SearchService:
    """This process's search service (the ``ranking`` app's)."""
    return apps.get_app_config("ranking").search_service
