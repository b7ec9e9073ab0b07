"""What a query with no result shows: a spelling correction's results, else the pages with most
of its words.

Layer: ``ranking.core``. :func:`search_with_fallback` wraps :meth:`Searcher.search` for the
views; nothing here knows Django. Words are conjunctive, so one misspelt, absent or
over-specific word empties a result list; the user then gets, in this order:

1. **A correction with results.** ``correct(query)`` (the views pass the crawl lexicon's
   did-you-mean, ``ranking.suggest``) proposes a query; when it has results they are shown and
   the answer says ``fallback="corrected"``, ``searched=<the correction>`` (the page offers
   the original back, forced with ``nfpr=1``, which passes ``correct=None``).
2. **Partial matches** (``fallback="partial"``): the query is relaxed by dropping loose words,
   as few as possible. Why this design rather than one OR of every word ranked by the
   number of words matched: the shards take the first n matches of the iterator tree (early
   termination), and the first n of a union are dominated by the commonest word's pages, so
   the pages with most words need not be among them. A union of *conjunctions* keeps every
   candidate close to the query:

   * words absent from the index (document frequency 0 in the local shards) are dropped
     first, all at once: no page can match them;
   * then level by level, r = (present words) down to 1: the disjunction of the conjunctions
     of r of the present words (each with everything the query said beside its loose words);
     the first level with a result is shown, or, when it has fewer results than the page
     shows, the next level (whose results include its own, ranked first). When there are
     more than ``MAX_SUBSETS`` such conjunctions, those keeping the rarest words come first
     (a rare word carries more of the query's intent, as its IDF says), and at most
     ``MAX_LEVELS`` levels are searched: the work is bounded by ``MAX_LEVELS x MAX_SUBSETS``
     intersections, each an ordinary conjunctive search in numpy;
   * results are ranked by the number of distinct query words they hold, then by score
     (``Searcher.search(prefer=...)``).

   Explicit operators keep their meaning: quoted phrases, ``-word`` and ``-"phrase"``
   exclusions, meta words (``site:``, ``lang:``…, the guessed ``site:`` of a domain-like word)
   and the automatic ``safe:``/``lang:`` filters are kept in every conjunction, so a fallback
   never shows a page they exclude. A query with ``|`` (already a union) is not relaxed.

The relaxed query is a plain query string, so remote shards (which parse the query text
themselves) search exactly what the local ones do.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ranking.core.query.parser import (
    GUESS_SITE_SUFFIXES,
    ParsedQuery,
    split_disjuncts,
    tokens_keep_quotes,
)
from ranking.core.search.messages import MessageKind
from ranking.core.search.pipeline import Searcher, SearchResult

MAX_SUBSETS = 8   # conjunctions per relaxed query
MAX_LEVELS = 4    # relaxed queries searched at most
_META = re.compile(r"^-?([a-z][a-z-]*):\S+$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Relaxation:
    """One relaxed query: its text and the terms of the loose words it may match."""

    query: str
    words: tuple[str, ...]   # the loose words kept by at least one conjunction
    prefer: tuple[str, ...]  # their terms (results holding more of them rank first)


def _droppable(token: str) -> bool:
    """A loose word: not quoted, negated, a meta or control word, nor a domain-like word
    (which the parser turns into ``site:``)."""
    if token.startswith(("-", '"')) or _META.match(token):
        return False
    low = token.lower()
    return not ((low.endswith(GUESS_SITE_SUFFIXES) or low.startswith("www."))
                and "." in low.strip("."))


def relaxations(query: str, parsed: ParsedQuery, terms_of: Callable[[str], Sequence[str]],
                doc_freq: Callable[[str], int | None]) -> list[Relaxation]:
    """The relaxed queries of ``query`` (parsed as ``parsed``), in the order to try them.
    ``terms_of(word)`` gives a word's query terms; ``doc_freq(term)`` its number of documents
    (None: unknown, as for a remote shard only)."""
    if len(parsed.disjuncts) != 1 or len([p for p in split_disjuncts(query) if p.strip()]) != 1:
        return []
    conjunct = parsed.disjuncts[0]
    searched = set(conjunct.terms)  # the stop words the parser dropped are not in it
    tokens = tokens_keep_quotes(query)
    loose: list[tuple[int, tuple[str, ...]]] = []
    for i, token in enumerate(tokens):
        if _droppable(token):
            terms = tuple(t for t in terms_of(token) if t in searched)
            if terms and all(t != other for _, ts in loose for other in ts for t in terms):
                loose.append((i, terms))
    has_phrase = bool(conjunct.phrases)
    if not loose or (len(loose) < 2 and not has_phrase):
        return []
    loose_at = {i for i, _ in loose}
    kept = [t for i, t in enumerate(tokens) if i not in loose_at and not _is_stop(t, terms_of,
                                                                                  searched)]
    # the parser's automatic filters, written out: the relaxed text must not be re-guessed
    # into another language or lose them
    kept.extend(w for w in conjunct.auto_meta if w not in kept)

    def freq(terms: tuple[str, ...]) -> int | None:
        values = [doc_freq(t) for t in terms]
        return None if any(v is None for v in values) else min(v for v in values if v is not None)

    present = [(i, terms) for i, terms in loose if freq(terms) != 0]
    rarity = {i: (freq(terms) if freq(terms) is not None else 0, n)
              for n, (i, terms) in enumerate(present)}
    by_rarity = sorted(present, key=lambda item: rarity[item[0]])
    out: list[Relaxation] = []
    lowest = 0 if has_phrase else 1
    top = len(present) if len(present) < len(loose) else len(present) - 1
    for r in range(top, lowest - 1, -1):
        subsets = list(itertools.islice(itertools.combinations(by_rarity, r), MAX_SUBSETS))
        if not subsets:
            continue
        parts = []
        for subset in subsets:
            chosen = {i for i, _ in subset}
            words = [t for i, t in enumerate(tokens) if i in chosen]
            parts.append(" ".join([*words, *kept]))
        kept_words = tuple(dict.fromkeys(tokens[i] for s in subsets for i, _ in s))
        prefer = tuple(dict.fromkeys(t for s in subsets for _, ts in s for t in ts))
        out.append(Relaxation(" | ".join(parts), kept_words, prefer))
        if len(out) >= MAX_LEVELS:
            break
    return out


def _is_stop(token: str, terms_of: Callable[[str], Sequence[str]], searched: set[str]) -> bool:
    """A loose stop word the parser dropped (kept out of the relaxed text: with fewer other
    words the parser would search it)."""
    if not _droppable(token):
        return False
    terms = terms_of(token)
    return bool(terms) and not any(t in searched for t in terms)


def search_with_fallback(searcher: Searcher, query: str, *, num: int = 10, offset: int = 0,
                         snippets: bool = True, ui_lang: str = "en", safe_search: bool = True,
                         correct: Callable[[str], str | None] | None = None,
                         count_ahead: int = 0,
                         within: Callable[[str], str] | None = None) -> SearchResult:
    """:meth:`Searcher.search`, then, when nothing matches, a correction's results or the
    partial matches (see the module); ``count_ahead`` as :meth:`Searcher.search` takes it.
    ``within`` turns a query into the one searched: filters that copy every disjunct (the
    search page's time period and tabs, ``ranking.params.effective_query``). The query, its
    correction and its relaxations are each searched through it, and the relaxations are
    made of ``query`` itself, a single disjunct (a copied one never relaxes)."""
    wrap = within if within is not None else (lambda text: text)
    kw = {"num": num, "offset": offset, "snippets": snippets, "ui_lang": ui_lang,
          "safe_search": safe_search, "count_ahead": count_ahead}
    result = searcher.search(wrap(query), **kw)
    if result.results or result.total or not query.strip():
        return result
    if correct is not None:
        fixed = correct(query)
        if fixed and fixed.strip() != query.strip():
            found = searcher.search(wrap(fixed), **kw)
            if found.results or found.total:
                return replace(found, query=result.query, fallback="corrected",
                               searched=wrap(fixed), elapsed=result.elapsed + found.elapsed)
    parsed = searcher.parser.parse(query, ui_lang=ui_lang, safe_search=safe_search)
    analyzer = searcher.analyzer

    def doc_freq(term: str) -> int | None:
        known = [s.document_frequency(term) for s in searcher.shards]
        docs = sum(d for d in known if d is not None)
        remote = any(d is None for d in known)  # a shard that cannot tell
        return None if remote and not docs else docs

    elapsed = result.elapsed
    best: tuple[SearchResult, str] | None = None
    for relaxed in relaxations(query, parsed, lambda w: analyzer.query_terms(w, parsed.lang),
                               doc_freq):
        found = searcher.search(wrap(relaxed.query), prefer=relaxed.prefer, **kw)
        elapsed += found.elapsed
        if (found.results or found.total) and (best is None or found.total > best[0].total):
            best = (found, wrap(relaxed.query))
        if best is not None and best[0].total >= offset + num:
            break  # enough to fill the page; else the next level (a superset) is tried
    if best is None:
        return replace(result, elapsed=elapsed)
    found, relaxed_query = best
    return replace(found, query=result.query, fallback="partial", searched=relaxed_query,
                   elapsed=elapsed, messages=tuple(m for m in found.messages
                                                   if m.kind is not MessageKind.REWRITE))
