"""The search pipeline: parse -> iterators -> group -> score -> top k -> summaries -> snippets.

Layer: ``ranking.core``. The views (``ranking/views.py``) build a :class:`Searcher` over the
shards the index locator found and call :meth:`Searcher.search`; nothing here knows Django.

Steps of :meth:`Searcher.search`:

1. parse (:mod:`ranking.core.query.parser`); bad syntax becomes messages, never an exception;
2. ask every shard for its candidates (:mod:`ranking.core.shard.local`): by default the exact
   best groups by score S, as many as the fusion's pool holds (``exact_groups``,
   :func:`ranking.core.scoring.bounds.pool_size`: 102 for a page of 10), found by dynamic
   pruning (:mod:`ranking.core.shard.exact`); a bounded shard (``exact=False``) its first ``n``
   matches, ``n`` = minimum results to group (at least offset + num); with several shards each
   gets ``n * alpha / shards`` through the searcher's fan-out (:mod:`ranking.core.search.fanout`),
   failures reported and skipped;
3. merge the shards' candidates (:mod:`ranking.core.search.merge`) and group them by url hash and
   text hash (:mod:`ranking.core.scoring.grouping`), then by near-duplicate cluster (one
   result per cluster, its canonical shown: :mod:`ranking.core.scoring.near_folding`, with the
   crawl's ``near_duplicates.npz`` beside ``scores.npz``), unless the query says ``raw:``;
4. score each group with the group score the shards' head prefetch uses too
   (:func:`ranking.core.scoring.grouping.score_groups`): S = Doc Rank + link score + bonuses + relevance (the shards computed
   every candidate's bonus factors; a group takes its best member's; the link score, LinkRank
   and trust from the crawl's ``scores.npz``, is looked up for every candidate at once and a
   group takes its maximum), fused by rank with the proximity (span sums normalised for the
   page's length, a group's maximum)
   for queries of two or more terms (:func:`ranking.core.scoring.formulas.fuse`) over the pool
   of the best groups by S (docs/exact-topk.md, section 5); sort, then read the
   stored summaries of the groups shown only (``num`` results from ``offset``, skipping
   dropped ones);
5. representative urls: a result that other urls redirect to shows whichever of them has the
   higher link score (seed 002's BasicFields), as the crawl's link analysis decided it for
   every machine (the scores file's redirect table; the summary's shard attaches it, a remote
   shard's too: :meth:`Searcher._representatives`);
6. snippets and highlighted titles for those results (:mod:`ranking.core.display.snippets`), and the
   explanation of each score (:mod:`ranking.core.search.explain`).

:meth:`Searcher._rank` runs steps 4 to 6 in named steps: score and order the groups, choose the
page of results shown (:meth:`Searcher._choose`), make each result (:meth:`Searcher._result`).

Link scores come with each shard's candidates (every queue server holds the crawl's
``scores.npz``: the analysis sends it there; :attr:`Candidates.linked
<ranking.core.shard.candidates.Candidates.linked>`), so a name server that reads remote shards
only ranks as one machine does without a scores file of its own; candidates without them are
looked up in ``link_scores`` (anything with a ``get()`` returning a
:class:`indexer.core.signals.link_scores.LinkScores` or None), by default the scores file of the
crawl the first local shard's bundle belongs to (``<work>/linkgraph/<ts>/scores.npz``), loaded
once per file version (:func:`indexer.core.signals.link_scores.cached_link_scores`). Without
either, or with Page Options' link score weight 0, the link score is 0 and nothing is looked up.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from indexer.core.runtime.workdir import bundle_near_duplicates_path, bundle_scores_path
from indexer.core.signals.link_scores import (
    LinkScores,
    cached_link_scores,
    link_score,
    representative_urls,
)
from indexer.core.signals.near_clusters import NearDuplicateClusters, cached_near_duplicates
from indexer.core.text import TextAnalyzer
from indexer.core.urls import host_of
from ranking.core.display.sections import MAX_SHOWN, matching_sections
from ranking.core.display.snippets import snippet, title_html, title_text
from ranking.core.errors import ShardError
from ranking.core.options import SearchOptions
from ranking.core.query.parser import ParsedQuery, QueryParser, query_word_terms
from ranking.core.scoring.bounds import pool_size
from ranking.core.scoring.grouping import (
    Groups,
    group_bonus,
    group_rows,
    grouping_weights,
    score_groups,
)
from ranking.core.scoring.near_folding import fold_near_duplicates
from ranking.core.search.explain import ScoredGroups, explain
from ranking.core.search.fanout import FanOut, per_shard_results
from ranking.core.search.merge import GroupRows, LinkValues, Merged, coverage
from ranking.core.search.messages import (
    MessageKind,
    SearchMessage,
    message_texts,
    shard_message,
)
from ranking.core.search.mixes import group_weights
from ranking.core.semantic.rerank import SemanticReranker, default_semantic, rerank_groups
from ranking.core.shard.candidates import ShardClient

DROP_METAS = frozenset({"NOINDEX", "NONE", "JUSTFOLLOW"})
SUMMARY_SLACK = 2  # extra summaries read per batch, for results dropped at summary time
MAX_LINK_DESCRIPTIONS = 3
MAX_POOL_CANDIDATES = 5000  # a deeper page's pool is fused over the candidates found


class LinkScoreSource(Protocol):
    def get(self) -> LinkScores | None: ...


class _NoLinkScores:
    def get(self) -> LinkScores | None:
        return None


class NearDuplicateSource(Protocol):
    def get(self) -> NearDuplicateClusters | None: ...


class _NoNearDuplicates:
    def get(self) -> NearDuplicateClusters | None:
        return None


def default_near_duplicates(shards: Sequence[ShardClient]) -> NearDuplicateSource:
    """The near-duplicate clusters file of the crawl of the first local shard, else none."""
    for shard in shards:
        path = shard.bundle_path
        clusters = bundle_near_duplicates_path(path) if path is not None else None
        if clusters is not None:
            return cached_near_duplicates(clusters)
    return _NoNearDuplicates()


def default_link_scores(shards: Sequence[ShardClient]) -> LinkScoreSource:
    """The scores file of the crawl of the first local shard (one whose bundle path is laid
    out as ``<work>/qs<n>/IndexData<ts>``), else none."""
    for shard in shards:
        path = shard.bundle_path
        scores = bundle_scores_path(path) if path is not None else None
        if scores is not None:
            return cached_link_scores(scores)
    return _NoLinkScores()


@dataclass(frozen=True, slots=True)
class _Ranked:
    """The groups as scored (what an explanation reads) and what a result is made with: the
    words to highlight, whether to make snippets and the query's terms (the sections that
    match them)."""

    scored: ScoredGroups
    words: list[str]
    snippets: bool
    terms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Result:
    url: str
    title: str            # highlighted, HTML-escaped
    snippet: str          # highlighted, HTML-escaped ("" under NOSNIPPET)
    score: float
    explanation: Mapping[str, Any]
    doc_id: str           # hex
    shard: str
    plain_title: str = ""
    # from the stored summary already read for the result, so that the page around the
    # results need not read it again: the page's robot metas and keywords, and whether the
    # shard keeps a cached copy of it (None: the shard did not say)
    robot_metas: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    has_cache: bool | None = None
    # the sections of the same page that matched too, grouped under this result: (url, title)
    sections: tuple[tuple[str, str], ...] = ()
    # the other pages of this result's near-duplicate cluster, folded into it
    # (ranking.core.scoring.near_folding): "n similar pages"
    similar_count: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = {"url": self.url, "title": self.title, "snippet": self.snippet,
               "score": self.score, "explanation": self.explanation}
        if self.sections:
            out["sections"] = [{"url": u, "title": t} for u, t in self.sections]
        if self.similar_count:
            out["similar_count"] = self.similar_count
        return out


# The message of a search that no shard answered (each failure follows as its own message).
NO_SHARD_ANSWERED = "no part of the index answered, so nothing could be found"


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    rewritten: str
    results: tuple[Result, ...]
    total: int            # estimated number of matching (grouped) results
    elapsed: float        # seconds
    partial: bool         # a time budget ran out or a shard was skipped
    messages: tuple[SearchMessage, ...] = ()  # sorted by kind on the page
    offset: int = 0
    num: int = 10
    # what a query with no result showed instead (ranking.core.search.relax): "" (nothing),
    # "corrected" (a spelling correction's results) or "partial" (pages with most of the
    # words); ``searched`` is then the query actually searched
    fallback: str = ""
    searched: str = ""
    # with ``count_ahead``: how many results the same ranking shows after this page, at most
    # that many (their heads read, as for the page: the search page's totals, ranking.totals)
    ahead: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"query": self.query, "rewritten": self.rewritten,
                "results": [r.as_dict() for r in self.results], "total": self.total,
                "time": round(self.elapsed, 6), "partial": self.partial,
                "messages": message_texts(self.messages), "offset": self.offset, "num": self.num,
                "searched": self.searched or self.query, "fallback": self.fallback or None}


class Searcher:
    """Answers queries over a fixed list of shards with fixed options. Reusable and cheap to
    keep; the shards own their readers. It owns the threads that ask its shards in parallel
    (:class:`ranking.core.search.fanout.FanOut`): :meth:`close` releases them when the searcher is
    dropped (a later search starts them again)."""

    def __init__(self, shards: Sequence[ShardClient], options: SearchOptions | None = None,
                 *, analyzer: TextAnalyzer | None = None, shard_timeout: float = 5.0,
                 link_scores: LinkScoreSource | None = None,
                 semantic: SemanticReranker | None = None,
                 near_duplicates: NearDuplicateSource | None = None) -> None:
        self.shards = list(shards)
        self.options = options or SearchOptions()
        self.analyzer = analyzer or TextAnalyzer()
        self.parser = QueryParser(self.analyzer)
        self.shard_timeout = shard_timeout
        self.link_scores = link_scores if link_scores is not None else \
            default_link_scores(self.shards)
        # the optional semantic signal: embeddings beside the local shards' bundles
        self.semantic = semantic if semantic is not None else default_semantic(self.shards)
        # the crawl's near-duplicate clusters: one result per cluster
        self.near_duplicates = near_duplicates if near_duplicates is not None else \
            default_near_duplicates(self.shards)
        self.fan_out = FanOut()

    def close(self) -> None:
        """Release the fan-out's threads (the shards stay open: they are not the
        searcher's)."""
        self.fan_out.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, query: str, *, num: int = 10, offset: int = 0, snippets: bool = True,
               ui_lang: str = "en", safe_search: bool = True,
               prefer: Sequence[str] = (), count_ahead: int = 0) -> SearchResult:
        """Search ``query``; with ``prefer`` (terms), groups holding more of those terms
        rank first, then by score (partial matches, :mod:`ranking.core.search.relax`).
        ``count_ahead`` > 0 after a full page: :attr:`SearchResult.ahead` counts the results
        shown after it, at most that many, from the same ranking."""
        start = time.perf_counter()
        options = self.options
        num = max(0, int(num))
        offset = max(0, int(offset))
        parsed = self.parser.parse(query, ui_lang=ui_lang, safe_search=safe_search)
        messages = [SearchMessage.notice(m) for m in parsed.messages]
        if parsed.guessed and parsed.rewritten != parsed.text.strip():
            messages.append(SearchMessage(MessageKind.REWRITE,
                                          f"searched for: {parsed.rewritten}"))
        shards = self.shards if parsed.controls.network else self.shards[:1]
        if not shards:
            messages.append(SearchMessage.error("there is no index to search yet"))
        if parsed.is_empty or not shards:
            return SearchResult(parsed.text, parsed.rewritten, (), 0,
                                time.perf_counter() - start, False, tuple(messages), offset, num)
        # an exact shard finds its best groups exactly, as many as the fusion's pool holds
        # (ranking.core.scoring.bounds, ranking.core.shard.exact); a bounded one reads its
        # first n matches (ranking.core.shard.matching)
        pool = min(pool_size(offset + num, options.proximity_bonus), MAX_POOL_CANDIDATES)
        n = max(options.min_results_to_group, offset + num)
        each = per_shard_results(n, options.server_alpha, len(shards))
        options = replace(options, exact_groups=pool)
        answers, failures = self.fan_out.candidates(shards, query, parsed, each, options,
                                                    self.shard_timeout)
        # a shard failing is a warning (partial results), an error when no shard answered
        failed = SearchMessage.warning if answers else SearchMessage.error
        if failures and not answers:
            messages.append(SearchMessage.error(NO_SHARD_ANSWERED))
        messages.extend(failed(f) for f in failures)
        for c in answers:
            for text in c.messages:
                if all(text != m.text for m in messages):
                    messages.append(shard_message(text))
        partial = bool(failures) or any(c.partial for c in answers)
        merged = Merged.of(answers)
        groups = group_rows(merged.doc_ids, merged.doc_rank, merged.relevance, merged.proximity,
                            options, raw=parsed.controls.raw)
        folded = fold_near_duplicates(
            merged.doc_ids, groups,
            None if parsed.controls.raw else self.near_duplicates.get(),
            grouping_weights(options))
        groups = folded.groups
        results, ahead = self._rank(parsed, merged, groups, offset, num, snippets, prefer,
                                    count_ahead, folded.similar)
        found = sum(len(c) for c in answers)
        estimate = sum(c.estimate for c in answers)
        total = len(groups) if all(c.exhausted for c in answers) else \
            int(round(estimate * len(groups) / found)) if found else 0
        return SearchResult(parsed.text, parsed.rewritten, tuple(results), total,
                            time.perf_counter() - start, partial, tuple(messages), offset, num,
                            ahead=ahead)

    # -- ranking the groups ----------------------------------------------------------------

    def _rank(self, parsed: ParsedQuery, merged: Merged, groups: Groups, offset: int,
              num: int, snippets: bool, prefer: Sequence[str] = (), count_ahead: int = 0,
              similar: np.ndarray | None = None) -> tuple[list[Result], int | None]:
        """Score the groups (:func:`ranking.core.scoring.grouping.score_groups`, with the link score),
        order them, read the summaries of the page of results shown and make its results;
        with ``count_ahead`` and a full page, also count the results shown after it (heads
        only, at most ``count_ahead``), else None."""
        # a group's bonuses are its best member's (a page and the links to it share the url;
        # the title bonus is the page's)
        bonus_rows = merged.bonuses.sum(axis=0)
        links = self._link_values(merged, groups)
        final, fusion = score_groups(groups, group_bonus(groups, bonus_rows), self.options,
                                     parsed.controls.weight, parsed.word_count, links.group,
                                     pool_size(offset + num, self.options.proximity_bonus))
        weights = group_weights(self.shards, merged.cands, merged.shard_of[groups.rep])
        if weights is not None:  # a crawl mix: each crawl's results weighted
            final = final * weights
        semantic: dict[int, dict[str, Any]] = {}
        if prefer:  # more of the preferred terms first, then the score
            order = np.lexsort((-final, -coverage(merged, groups, prefer)))
        else:
            order = np.argsort(-final, kind="stable")
            # the semantic signal re-ranks the first groups (off unless semantic_weight > 0)
            order, semantic = rerank_groups(self.semantic, " ".join(parsed.highlight),
                                            merged.doc_ids, groups.rep, order, self.options)
        terms, mult = query_word_terms(parsed)
        words = list(dict.fromkeys([*parsed.highlight, *terms]))
        chosen = self._choose(merged, groups, order, offset, num, snippets, words)
        ahead = None
        if count_ahead > 0 and num > 0 and len(chosen) == num:
            ahead = len(self._choose(merged, groups, order, offset + num, count_ahead, False,
                                     words))
        shown = self._representatives(links.scores, [s for _, s in chosen])
        scored = ScoredGroups(self.options, parsed, merged, groups, final, fusion, links,
                              bonus_rows, int(sum(mult)))
        ranked = _Ranked(scored, words, snippets, tuple(terms))
        rows_of = GroupRows(groups)
        results = [self._result(ranked, g, rows_of.of(g), summary, rep_url)
                   for (g, summary), rep_url in zip(chosen, shown, strict=True)]
        for (g, _), result in zip(chosen, results, strict=True):
            if g in semantic:  # what the semantic signal's fusion used
                result.explanation["semantic"] = semantic[g]  # type: ignore[index]
        if similar is not None:  # the near-duplicates folded into each result
            results = [replace(r, similar_count=int(similar[g])) if similar[g] else r
                       for (g, _), r in zip(chosen, results, strict=True)]
        return results, ahead

    def _choose(self, merged: Merged, groups: Groups, order: np.ndarray, offset: int,
                num: int, snippets: bool, words: Sequence[str]
                ) -> list[tuple[int, dict[str, Any]]]:
        """The groups shown and their summaries: ``num`` from ``offset`` in ``order``,
        skipping the dropped ones (robot metas, a url only links point at); summaries are
        read only for the page of results shown (plus those dropped on the way). A section of
        a page (a sub-document at ``<page url>#<anchor>``, :mod:`crawler.core.processing.
        plugins.sections`) whose page or another section of it ranks higher is grouped under
        that result (its summary's ``sections``: (url, title) pairs) and takes no place of
        its own: the first of them to rank links to what matched, a section or the page."""
        chosen: list[tuple[int, dict[str, Any]]] = []
        shown: dict[str, int] = {}  # page url -> its result in chosen (-1: on an earlier page)
        skip = offset
        at = 0
        while len(chosen) < num and at < order.size:
            window = order[at:at + skip + num - len(chosen) + SUMMARY_SLACK]
            at += window.size
            got = self._summaries(merged, groups.rep[window], heads=not snippets,
                                  words=words if snippets else None)
            for g, summary in zip(window.tolist(), got, strict=True):
                if summary is None:
                    continue
                if DROP_METAS & {str(m).upper() for m in summary.get("robot_metas", ())}:
                    continue
                if summary.get("page_indexed") is False:
                    continue  # only links point at this url: no page to show (never crawled)
                if summary.get("url") in self.options.hidden_urls:
                    continue  # hidden by the operator (ranking.core.search.curation)
                url = str(summary.get("url", ""))
                if self.options.hidden_hosts and host_of(url) in self.options.hidden_hosts:
                    continue  # the operator hid the whole host
                page = url.partition("#")[0]
                if page in shown:  # grouped under the page's result
                    first = shown[page]
                    if first >= 0:
                        head, held = chosen[first]
                        sections = [*held.get("sections", ()), (url, str(summary.get("title")))]
                        chosen[first] = (head, {**held, "sections": sections})
                    continue
                if skip:
                    skip -= 1
                    shown[page] = -1
                    continue
                shown[page] = len(chosen)
                chosen.append((g, summary))
                if len(chosen) >= num:
                    break
        return chosen

    def _result(self, ranked: _Ranked, g: int, members: np.ndarray, summary: dict[str, Any],
                rep_url: dict[str, Any] | None) -> Result:
        """The result of group ``g`` (its candidate rows ``members``) from its summary."""
        options = self.options
        words = ranked.words
        merged = ranked.scored.merged
        rep = int(ranked.scored.groups.rep[g])
        description = str(summary.get("description", ""))
        if ranked.snippets:
            description = self._group_description(merged, members, rep, description)
        url = str(summary.get("url", ""))
        title = str(summary.get("title", ""))
        if summary.get("kind") and summary.get("source") and title == url:
            title = ""  # a link document's "title" is its target url
        explanation = explain(ranked.scored, g, members)
        if rep_url is not None:
            explanation["representative_url"] = rep_url
            url = rep_url["url"]
        metas = summary.get("robot_metas", ())
        shard = merged.cands[int(merged.shard_of[rep])]
        return Result(
            url=url,
            title=title_html(title, description, url, words),
            snippet=snippet(description, words, options, metas,
                            str(summary.get("body_excerpt", ""))) if ranked.snippets else "",
            score=float(ranked.scored.final[g]),
            explanation=explanation,
            doc_id=merged.doc_ids[rep].tobytes().hex(),
            shard=shard.shard,
            plain_title=title_text(title, description, url),
            robot_metas=tuple(str(m) for m in metas),
            keywords=tuple(str(k) for k in summary.get("keywords", ()) or ()),
            has_cache=summary["has_cache"] if isinstance(summary.get("has_cache"), bool)
            else None,
            sections=self._sections(summary, ranked),
        )

    def _sections(self, summary: dict[str, Any], ranked: _Ranked) -> tuple[tuple[str, str], ...]:
        """The sections grouped under a result: those of its page that ranked on their own
        (sub-documents, :meth:`_choose`), then those whose headings hold the query's terms
        (the page's ``sections`` field, :func:`ranking.core.display.sections.
        matching_sections`; read only with snippets, when the whole summary is), at most
        :data:`~ranking.core.display.sections.MAX_SHOWN` of the latter, each link once."""
        out = {str(u): str(t) for u, t in summary.get("sections", ())}
        if ranked.snippets:
            for url, title in matching_sections(summary, ranked.terms, self.analyzer,
                                                ranked.scored.parsed.lang, MAX_SHOWN):
                out.setdefault(url, title)
        return tuple(out.items())

    def _link_values(self, merged: Merged, groups: Groups) -> LinkValues:
        """Every candidate's LinkRank (relative) and trust, as its shard found them in the
        crawl's link scores (a remote shard's too: a name server needs no scores file of its
        own), else in one vectorised lookup by url hash in this machine's file; and each
        group's link score (the maximum over its members)."""
        m, n = merged.doc_rank.size, len(groups)
        weighted = bool(self.options.link_score_weight)
        scores = self.link_scores.get() if weighted else None
        known = merged.link_known
        if not weighted or m == 0 or (scores is None and not known.any()):
            z = np.zeros(m)
            return LinkValues(False, z, z, np.zeros(n), np.full(n, -1, np.int64), scores)
        relative, trust = merged.link_relative.copy(), merged.link_trust.copy()
        missing = ~known
        if scores is not None and missing.any():
            relative[missing] = scores.scores_for(merged.doc_ids[missing], "linkrank_relative")
            trust[missing] = scores.scores_for(merged.doc_ids[missing], "trust")
        value = link_score(relative, trust)
        group = np.full(n, -np.inf)
        np.maximum.at(group, groups.member_group, value)
        group[~np.isfinite(group)] = 0.0
        # the member holding the maximum: the last row (in row order) whose value equals it
        rows = np.arange(m, dtype=np.int64)
        best = np.full(n, -1, np.int64)
        hit = value == group[groups.member_group]
        best[groups.member_group[hit]] = rows[hit]
        return LinkValues(True, relative, trust, group, best, scores)

    def _representatives(self, scores: LinkScores | None, summaries: list[dict[str, Any]]
                         ) -> list[dict[str, Any] | None]:
        """For each shown result, the representative among its url and the urls redirecting
        to it (seed 002's BasicFields): the one with the higher link score is displayed. None
        where it is the url itself, or with Page Options' link score weight 0.

        The link analysis decides it once for the crawl, from every shard's redirects (the
        scores file's redirect table), and the shard that answers a summary attaches it
        (``representative_url``, :meth:`LocalShard.with_representatives
        <ranking.core.shard.local.LocalShard.with_representatives>`): a remote shard's summary
        carries it over HTTP like a local one's, so a name server without a scores file shows
        the urls one machine shows. Only when this machine's scores file has no redirect table
        (written before the table existed, or by ``score_update`` alone) is it found as
        before: the redirect documents of the local shards, compared by that file's scores."""
        out: list[dict[str, Any] | None] = [None] * len(summaries)
        if self.options.link_score_weight == 0:
            return out
        urls = [str(s.get("url", "")) for s in summaries]
        for i, summary in enumerate(summaries):
            sent = summary.get("representative_url")
            if isinstance(sent, dict) and sent.get("orig_url") == urls[i] \
                    and isinstance(sent.get("url"), str):
                out[i] = {k: sent.get(k) for k in ("url", "orig_url", "url_score",
                                                   "orig_score")}
        if scores is None or scores.has_redirect_table:
            return out
        pairs: list[tuple[str, str]] = []
        owner: list[int] = []
        for i, url in enumerate(urls):
            for source in self._redirect_sources(url):
                pairs.append((source, url))
                owner.append(i)
        if not pairs:
            return out
        for i, rep in zip(owner, representative_urls(pairs, scores.scores_for), strict=True):
            current = out[i]
            if rep.url != urls[i] and (current is None or rep.url_score > current["url_score"]):
                out[i] = rep.as_dict()
        return out

    def _redirect_sources(self, url: str) -> list[str]:
        """Urls whose redirect documents point at ``url``, in the local shards (a remote
        shard's index is not read here)."""
        found: list[str] = []
        for shard in self.shards:
            for source in shard.redirect_sources(url):
                if source not in found:
                    found.append(source)
        return found

    def _summaries(self, merged: Merged, rows: np.ndarray, heads: bool = False,
                   words: Sequence[str] | None = None) -> list[dict[str, Any] | None]:
        """Stored summaries of candidate ``rows``; with ``heads`` only their urls and titles
        where the shard can read just those (no snippets to make); with the query ``words``,
        an excerpt of the body of a page whose description holds none, where the shard can
        make one (``snippet_summaries``)."""
        out: list[dict[str, Any] | None] = [None] * len(rows)
        by_shard: dict[int, list[int]] = {}
        for i, row in enumerate(rows.tolist()):
            by_shard.setdefault(int(merged.shard_of[row]), []).append(i)
        for s, positions in by_shard.items():
            shard = self._shard_named(merged.cands[s].shard)
            if shard is None:
                continue
            ids = [merged.doc_ids[int(rows[i])].tobytes() for i in positions]
            try:
                if heads:
                    got = shard.summary_heads(ids)
                elif words is not None:
                    got = shard.snippet_summaries(ids, words, self.options)
                else:
                    got = shard.summaries(ids)
            except ShardError:  # a shard failing now only loses its results on this page
                continue
            for i, summary in zip(positions, got, strict=True):
                out[i] = summary
        return out

    def _shard_named(self, name: str) -> ShardClient | None:
        for shard in self.shards:
            if shard.name == name:
                return shard
        return None

    def _group_description(self, merged: Merged, rows: np.ndarray, rep: int,
                           description: str) -> str:
        """The page's description, then the texts of the link documents among the group's
        ``rows`` joined with ' .. ' until longer than the minimum description length
        (the Yioop design document's snippets)."""
        if len(description) > self.options.min_description_length:
            return description
        links = [r for r in rows.tolist() if r != rep
                 and not merged.page[r]][:MAX_LINK_DESCRIPTIONS]
        if not links:
            return description
        texts = [description] if description else []
        for summary in self._summaries(merged, np.array(links, dtype=np.int64)):
            text = str((summary or {}).get("description", ""))
            if text and text not in texts:
                texts.append(text)
            if len(" .. ".join(texts)) > self.options.min_description_length:
                break
        return " .. ".join(texts)

def search(shards: Sequence[ShardClient], query: str, options: SearchOptions | None = None,
           **kwargs: Any) -> SearchResult:
    """One-off convenience around :class:`Searcher`."""
    return Searcher(shards, options).search(query, **kwargs)
