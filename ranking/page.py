"""What the search page shows around the pipeline's results: per-result links, pagination,
messages, and the lookups of stored pages (for the cache link and the cached page view).

Layer: glue of the ``ranking`` app (no Django imports; :mod:`ranking.views` renders). The
pipeline's :class:`~ranking.core.search.pipeline.Result` carries the url, the highlighted title and
snippet, the score and its explanation, and what the links below need from the page's stored
summary, read by the pipeline for the results shown (its robot metas and keywords, and whether
a cached copy is kept); a result without them (a list without snippets, a url shown in place of
its redirect's target) has its stored page read again here:

* a "cached" link when the summary's robot metas allow archiving (no NOARCHIVE, no NONE) and
  the bundle holds a cached copy of the page (its doc_map member has a cache length);
* "more from this site" (``site:<host>``), "inlinks" (``link:<url>``, the meta word every page
  linking to the url carries) and "similar": the pages nearest by embedding
  (``/similar?url=``, :mod:`ranking.similar`) when the index has stored embeddings, else the
  page's top keywords joined with ``|``, as Yioop's related search uses the page's word cloud.

A query with ``site:`` hosts and no result names the other finished crawls that hold pages
of them (:func:`crawls_holding`).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import numpy as np
from django.utils.translation import gettext as _

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.errors import CorruptIndexError
from indexer.core.ids import DOC_TYPE, DocType
from indexer.core.urls import host_of
from ranking.core.query.parser import ParsedQuery
from ranking.core.search.mixes import crawl_of, unwrap
from ranking.core.search.pipeline import Result, SearchResult
from ranking.core.shard.candidates import ShardClient
from ranking.core.shard.local import LocalShard

from .similar import has_embeddings
from .totals import PAGE_LINKS, Reach

NO_ARCHIVE = frozenset({"NOARCHIVE", "NONE"})
DISPLAY_URL_CHARS = 80
SIMILAR_WORDS = 4
LANGUAGES = (("en", "English"), ("fr", "Français"), ("de", "Deutsch"), ("es", "Español"),
             ("it", "Italiano"), ("pt", "Português"), ("nl", "Nederlands"), ("ru", "Русский"),
             ("ja", "日本語"), ("zh", "中文"), ("ko", "한국어"), ("ar", "العربية"))
_STOP = frozenset("a an and are as at be by for from has have in is it its of on or that the "
                  "this to was were will with".split())
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True, slots=True)
class StoredPage:
    """A page found in a local bundle: its summary and whether a cached copy is kept."""

    doc_id: bytes
    summary: dict[str, Any]
    has_cache: bool
    shard: str

    @property
    def archivable(self) -> bool:
        return may_archive(self.summary.get("robot_metas", ()))

    @property
    def fetched_at(self) -> datetime | None:
        try:
            seconds = float(self.summary.get("fetched_at") or 0)
        except (TypeError, ValueError):
            return None
        return datetime.fromtimestamp(seconds, UTC) if seconds > 0 else None


def _page_member(reader: IndexBundleReader, partition: int, index: int) -> int | None:
    """The doc_map member row of the page document of entry ``index`` (not a link record)."""
    dm = reader.doc_map(partition)
    rep = dm.doc_id(index)
    if rep[DOC_TYPE] != DocType.LINK:
        return dm.find_member(rep)
    for row in np.flatnonzero(dm.member_group == index).tolist():
        if dm.member_ids[row, DOC_TYPE] != DocType.LINK:
            return int(row)
    return None


def stored_page(shard: LocalShard, url: str) -> StoredPage | None:
    """The newest page document of ``url`` in the shard's bundle (through ``info:<url>``)."""
    with shard.lock:
        reader = shard.reader
        last = None
        for block in reader.postings(f"info:{url}"):
            if len(block.doc_index):
                last = (block.partition, int(block.doc_index[-1]))
        if last is None:
            return None
        row = _page_member(reader, *last)
        if row is None:
            return None
        dm = reader.doc_map(last[0])
        doc_id = dm.member_ids[row].tobytes()
        summary = reader.summary(doc_id)
        if summary is None:
            return None
        return StoredPage(doc_id, dict(summary), int(dm.cache_length[row]) > 0, shard.name)


def may_archive(robot_metas: Sequence[str]) -> bool:
    return not ({str(m).upper() for m in robot_metas} & NO_ARCHIVE)


def carried(result: Result) -> bool:
    """Whether ``result`` carries what its links need from the stored summary (robot metas,
    keywords, cached copy kept): the pipeline's results with snippets do, as read for them.
    Results without (heads only), and results shown under another url than their page's (a
    redirect's source, whose stored page is the redirect), are looked up again."""
    return result.has_cache is not None and \
        "representative_url" not in result.explanation


def find_stored_page(shards: Sequence[ShardClient], url: str) -> StoredPage | None:
    for shard in map(unwrap, shards):
        if isinstance(shard, LocalShard):
            page = stored_page(shard, url)
            if page is not None:
                return page
    return None


def _stored_or_none(shards: Sequence[ShardClient], url: str) -> StoredPage | None:
    """:func:`find_stored_page`, None when its stored record is damaged (the result is then
    shown without the links its summary would give)."""
    try:
        return find_stored_page(shards, url) if shards else None
    except CorruptIndexError:
        return None


def cached_copy(shards: Sequence[ShardClient], page: StoredPage) -> bytes | None:
    for shard in shards:
        if isinstance(shard, LocalShard) and shard.name == page.shard:
            with shard.lock:
                return shard.reader.cached_page(page.doc_id)
    return None


def as_typed(searched: str, lang: str, period: Sequence[str] = (),
             media: Sequence[str] = ()) -> str:
    """A searched query (:func:`ranking.params.effective_query`) as the reader would type it:
    without the copies and words of a time ``period`` and of a tab's ``media`` alternatives,
    and without the language filter's ``lang:`` word."""
    if period or media:
        mark = " " + " ".join([*media[:1], *period[:1]])
        searched = " | ".join(part[:-len(mark)] for part in searched.split(" | ")
                              if part.endswith(mark))
    if lang and searched.endswith(f" lang:{lang}"):
        searched = searched[:-len(f" lang:{lang}")]
    return searched


def display_url(url: str, limit: int = DISPLAY_URL_CHARS) -> str:
    """The url without its scheme, shortened in the middle when long."""
    shown = re.sub(r"^https?://", "", url).rstrip("/") or url
    if len(shown) <= limit:
        return shown
    keep = limit - 1
    return shown[:keep * 2 // 3] + "\u2026" + shown[-(keep - keep * 2 // 3):]


def similar_query(summary: dict[str, Any] | None, plain_title: str,
                  keywords: Sequence[str] | None = None) -> str:
    """The page's word cloud as a disjunction: its stored keywords (``keywords``, else the
    summary's), else its title's words."""
    words: list[str] = []
    if keywords is None:
        keywords = (summary or {}).get("keywords", ()) or ()
    for word in keywords:
        word = str(word).lower()
        if _WORD.fullmatch(word) and word not in _STOP and word not in words:
            words.append(word)
    if len(words) < 2:
        for word in _WORD.findall(plain_title.lower()):
            if word not in _STOP and word not in words:
                words.append(word)
    return " | ".join(words[:SIMILAR_WORDS])


def without_page(query: str, url: str) -> str:
    """``query`` with the page of ``url`` left out of each of its ``|`` alternatives
    (``-info:url``): a page's "Similar" and "Inlinks" listed the page itself (its own
    keywords, its link to itself)."""
    return " | ".join(f"{part.strip()} -info:{url}" for part in query.split(" | "))


@dataclass(slots=True)
class ResultView:
    """One result as the template shows it."""

    result: Result
    rank: int
    display_url: str
    site: str
    cache_href: str = ""
    similar_href: str = ""
    near_href: str = ""  # the near-duplicates folded into the result (ranking.searchpage.near_duplicates)
    inlinks_href: str = ""
    site_href: str = ""
    explanation_rows: list[tuple[str, str]] = field(default_factory=list)
    term_rows: list[dict[str, Any]] = field(default_factory=list)
    explanation_html: str = ""  # the two tables of the rows above, escaped (see explain_html)
    thumb_href: str = ""  # Images tab: the stored copy of the image (ranking.searchpage.media)
    duration: str = ""  # Videos tab: the video's length, m:ss
    news_source: str = ""  # News tab: the news source's name
    published: Any = None  # News tab: the item's publication time (an aware datetime)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def explanation_rows(explanation: dict[str, Any]) -> tuple[list[tuple[str, str]],
                                                           list[dict[str, Any]]]:
    """The score explanation as (label, value) rows and per-term rows."""
    rows: list[tuple[str, str]] = [(_("Score"), _fmt(explanation.get("score", 0.0)))]
    for key, label in (("doc_rank", _("Doc Rank")), ("relevance", _("Relevance"))):
        part = explanation.get(key) or {}
        if isinstance(part, dict):
            rows.append((label, f"{_fmt(part.get('value', 0.0))} × weight "
                                f"{_fmt(part.get('weight', 1.0))}"))
    proximity = explanation.get("proximity") or {}
    fusion = explanation.get("fusion") or {}
    if isinstance(proximity, dict) and proximity:
        value = _fmt(proximity.get("value", 0.0))
        if isinstance(fusion, dict) and fusion:
            # proximity is not added to the score: the two are fused by their ranks
            rows.append((_("Proximity"),
                         f"{value} (rank {fusion.get('proximity_rank')}; fused "
                         f"with the score's rank {fusion.get('score_rank')}, "
                         f"k {_fmt(fusion.get('k'))}, share "
                         f"{_fmt(fusion.get('proximity_share'))})"))
        else:
            rows.append((_("Proximity"), f"{value} (not used: one-word query or weight 0)"))
    link = explanation.get("link_score") or {}
    if isinstance(link, dict) and link:
        inputs = ""
        if "linkrank_relative" in link:
            inputs = (f" (LinkRank {_fmt(link['linkrank_relative'])} × average, trust "
                      f"{_fmt(link.get('trust', 0.0))})")
        elif not link.get("available", False):
            inputs = " (no link scores)"
        rows.append((_("Link score"), f"{_fmt(link.get('value', 0.0))} × weight "
                                      f"{_fmt(link.get('weight', 1.0))}{inputs}"))
    semantic = explanation.get("semantic") or {}
    if isinstance(semantic, dict) and semantic:
        rows.append((_("Semantic"), semantic_row(semantic)))
    rep = explanation.get("representative_url") or {}
    if isinstance(rep, dict) and rep.get("orig_url"):
        rows.append((_("Shown url"),
                     f"{rep.get('url')} (link score {_fmt(rep.get('url_score'))}) "
                     f"over {rep['orig_url']} ({_fmt(rep.get('orig_score'))})"))
    bonuses = explanation.get("bonuses") or {}
    if isinstance(bonuses, dict):
        shown = ", ".join(f"{k.replace('_', ' ')} {_fmt(v)}" for k, v in bonuses.items()
                          if k != "total" and v)
        rows.append((_("Bonuses"), f"{_fmt(bonuses.get('total', 0.0))}"
                                + (f" ({shown})" if shown else "")))
    if explanation.get("weight", 1.0) != 1.0:
        rows.append((_("Query weight"), _fmt(explanation["weight"])))
    if explanation.get("shard"):
        rows.append((_("Index"), str(explanation["shard"])))
    terms = []
    relevance = explanation.get("relevance") or {}
    for t in relevance.get("terms", ()) if isinstance(relevance, dict) else ():
        terms.append({"term": t.get("term"), "f": _fmt(t.get("f", 0.0)),
                      "l_t": t.get("l_t"), "value": _fmt(t.get("value", 0.0))})
    return rows, terms


def semantic_row(semantic: dict[str, Any]) -> str:
    """The semantic signal's part of a result's order (:mod:`ranking.core.semantic.rerank`)."""
    if semantic.get("similarity") is None:
        return (f"no embedding of this page (score rank {semantic.get('score_rank')}, "
                f"not moved by similarity)")
    return (f"similarity {_fmt(semantic['similarity'])} (rank {semantic.get('semantic_rank')}; "
            f"fused with the score's rank {semantic.get('score_rank')}, weight "
            f"{_fmt(semantic.get('weight'))}, k {_fmt(semantic.get('k'))})")


def explain_html(rows: Sequence[tuple[str, str]], terms: Sequence[dict[str, Any]]) -> str:
    """The "Why this result?" tables of one result, every value escaped. Made here rather than
    in the template: ten results' rows are a few hundred template nodes, as much time as
    the rest of the page."""
    caption, terms_caption = _("Score explanation"), _("Query terms")
    heads = (_("Term"), _("Weighted frequency"), _("Occurrences in index"), _("Relevance"))
    out = ['<table class="explain">\n'
           f'            <caption class="visually-hidden">{_esc(caption)}</caption>\n'
           '            ']
    out.extend(f'<tr><th scope="row">{_esc(label)}</th><td>{_esc(value)}</td></tr>'
               for label, value in rows)
    out.append("\n          </table>")
    if terms:
        out.append('\n          <table class="explain terms">\n'
                   f"            <caption>{_esc(terms_caption)}</caption>\n"
                   "            <tr>" + "".join(f'<th scope="col">{_esc(h)}</th>' for h in heads)
                   + "</tr>\n            ")
        out.extend(f"<tr><td>{_esc(t.get('term'))}</td><td>{_esc(t.get('f'))}</td>"
                   f"<td>{_esc(t.get('l_t'))}</td><td>{_esc(t.get('value'))}</td></tr>"
                   for t in terms)
        out.append("\n          </table>")
    return "".join(out)


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def result_views(result: SearchResult, shards: Sequence[ShardClient], its: int | None,
                 options: Any, base: dict[str, str], query: str | None = None
                 ) -> list[ResultView]:
    """The page's results with their links; ``base`` holds the parameters links keep
    (its, safe); ``query`` is the query as typed, the words the cached copies highlight
    (default: the query searched)."""
    by_name = {s.name: s for s in shards}
    local = {name for name, s in by_name.items() if isinstance(unwrap(s), LocalShard)}
    # "Similar" goes to the pages nearest by embedding when the index has embeddings
    embedded = options.show_similar_link and has_embeddings(shards)
    out = []
    for i, r in enumerate(result.results):
        host = host_of(r.url)
        view = ResultView(r, result.offset + i + 1, display_url(r.url), host)
        if carried(r):
            cache = r.shard in local and bool(r.has_cache) and may_archive(r.robot_metas)
            keywords: Sequence[str] | None = r.keywords
            summary = None
        else:  # read the stored page again (see carried)
            page = _stored_or_none(shards, r.url)
            cache = page is not None and page.archivable and page.has_cache
            keywords = None
            summary = page.summary if page else None
        if options.show_cache_link and cache:
            crawl = crawl_of(by_name.get(r.shard), its)  # a mix's result: its own crawl
            view.cache_href = "/cache?" + urlencode(
                {"url": r.url, **({"its": str(crawl)} if crawl is not None else {}),
                 "q": result.query if query is None else query})
        if embedded:
            view.similar_href = "/similar?" + urlencode(
                {"url": r.url, **({"its": base["its"]} if base.get("its") else {})})
        elif options.show_similar_link:
            similar = similar_query(summary, r.plain_title, keywords)
            if similar:
                view.similar_href = "/?" + urlencode({"q": without_page(similar, r.url),
                                                      **base})
        if r.similar_count:
            view.near_href = "/near-duplicates?" + urlencode(
                {"url": r.url, **({"its": base["its"]} if base.get("its") else {})})
        if options.show_inlinks_link:
            view.inlinks_href = "/?" + urlencode(
                {"q": without_page(f"link:{r.url}", r.url), **base})
        if host:
            view.site_href = "/?" + urlencode({"q": f"site:{host}", **base})
        view.explanation_rows, view.term_rows = explanation_rows(dict(r.explanation))
        if options.show_result_score:
            view.explanation_html = explain_html(view.explanation_rows, view.term_rows)
        out.append(view)
    return out


@dataclass(frozen=True, slots=True)
class PageLink:
    number: int
    href: str
    current: bool


@dataclass(frozen=True, slots=True)
class Pagination:
    first: int           # 1-based rank of the first result shown
    last: int
    previous: str
    next: str
    pages: tuple[PageLink, ...]
    exact: bool = False  # the result's total is exact (no "about")


def pagination(result: SearchResult, params: dict[str, str],
               reached: Reach | None = None) -> Pagination | None:
    """Previous/next and numbered page links (``limit`` = offset, ``num`` = page size). With
    ``reached`` (:func:`ranking.totals.reach`) no link goes past the last result known to
    exist: every page linked has results."""
    num = result.num or 10
    shown = len(result.results)
    if not shown and not result.offset:
        return None
    total = max(result.total, result.offset + shown)
    if reached is not None:
        total = reached.reachable
    more = result.offset + shown < total and shown == num

    def href(offset: int) -> str:
        query = {k: v for k, v in params.items() if k != "limit"}
        if offset:
            query["limit"] = str(offset)
        return "/?" + urlencode(query)

    current = result.offset // num
    count = math.ceil(total / num)
    lo = max(0, min(current - PAGE_LINKS // 2, count - PAGE_LINKS))
    hi = min(count, lo + PAGE_LINKS)
    pages = tuple(PageLink(p + 1, href(p * num), p == current) for p in range(lo, hi))
    # past the end: "previous" is the last page with results
    back = min(result.offset - num, (count - 1) * num) if not shown and count else \
        result.offset - num
    return Pagination(result.offset + 1 if shown else 0, result.offset + shown,
                      href(max(0, back)) if result.offset else "",
                      href(result.offset + num) if more else "",
                      pages if count > 1 else (),
                      reached is not None and reached.exact)


# -- where a site: query's host is, when the index searched has none of it -----------------
# After a second crawl, ``site:docs.python.org asyncio`` said only "No results": search still
# read the first crawl. A search with no result whose query names ``site:`` hosts asks which
# other finished crawls hold pages of them; the page names them with a link that searches the
# crawl (``its=``), the JSON answer lists them (``elsewhere``).

MAX_CRAWLS = 10  # finished crawls looked at, newest first


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """A crawl not searched that holds pages of ``host``: its ``label``, timestamp ``its``
    and the search page url of the query over it (``href``)."""

    host: str
    label: str
    its: int
    href: str

    def as_dict(self) -> dict:
        return {"host": self.host, "crawl": self.label, "its": self.its, "href": self.href}


def site_hosts(parsed: ParsedQuery) -> list[str]:
    """The hosts the query's ``site:`` meta words name (``site:all`` left out), in order."""
    hosts: list[str] = []
    for conjunct in parsed.disjuncts:
        for meta in conjunct.meta:
            host = meta[len("site:"):] if meta.startswith("site:") else ""
            if host and host != "all" and host not in hosts:
                hosts.append(host)
    return hosts


def crawls_holding(hosts: Sequence[str], searched: Sequence[int],
                   crawls: Sequence[tuple[int, str]], holds: Callable[[int, str], bool],
                   params: dict[str, str]) -> list[Elsewhere]:
    """The ``crawls`` ((timestamp, label), newest first) other than the ``searched`` ones
    where ``holds(its, host)`` says a page of one of ``hosts`` is, one entry per crawl (its
    first host found); ``params`` are the search's, the link adds the crawl's ``its``."""
    found: list[Elsewhere] = []
    for its, label in crawls[:MAX_CRAWLS]:
        if its in searched:
            continue
        for host in hosts:
            if holds(its, host):
                href = "/?" + urlencode({**params, "its": str(its)})
                found.append(Elsewhere(host, label, its, href))
                break
    return found
