"""The four agent tools, one implementation behind the MCP server and the JSON endpoints.

Layer: glue of the ``ranking`` app. :mod:`ranking.agent.mcp_server` registers these as MCP
tools and :mod:`ranking.agent.views` answers them as JSON; both pass the caller's arguments
through unchanged and render what comes back. Every function returns a JSON-serialisable
``dict``; a bad argument raises :class:`ToolArgumentError` (a message for the caller), a
page that is not readable :class:`~ranking.agent.documents.DocumentNotFound`, an index that
is missing or damaged :class:`~ranking.core.errors.NoIndexError` or ``CorruptIndexError``.

* ``search(query, limit<=50, site, language, passages)``: the results of the index searched
  (the index chosen for search, the newest on disk while none is), as the search page ranks
  them (partial matches when no page has every word), each with its document id, url, title,
  crawl date and score, and with ``passages`` > 0 that many best passages of its text;
* ``read(ref, start, max_chars, section)``: the page's text (clean Markdown of its cached
  copy) from character ``start`` (or its ``section``'s heading), at most ``max_chars``,
  with ``next_start`` to page on (None at the end);
* ``cached(ref)``: the original crawl-time copy (decoded to text) and its date, with the
  text the offsets address;
* ``context(query, token_budget, max_passages_per_url)``: the best passages of the query's
  best results packed into the budget (:func:`ranking.core.display.passages.pack`).

Each passage carries ``start`` and ``end``, character offsets into its page's text: the
``text`` of ``cached`` (and of ``read`` from 0) sliced ``[start:end]`` is the passage's
``text``, exactly.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from django.apps import apps

from ranking.cached import decode
from ranking.core.display.markdown import section_span
from ranking.core.display.passages import Candidate, Passage, best_passages, pack
from ranking.core.display.snippets import query_words
from ranking.core.query.parser import query_word_terms
from ranking.core.search.mixes import crawl_of
from ranking.core.search.pipeline import SearchResult
from ranking.core.search.relax import search_with_fallback
from ranking.params import MAX_QUERY_CHARS, effective_query

from .documents import AgentDocument, DocumentStore
from .errors import ToolArgumentError

MAX_RESULTS = 50
MAX_PASSAGES = 10
MAX_READ = 20_000
DEFAULT_READ = 4_000
DEFAULT_BUDGET = 2_000
MAX_BUDGET = 32_000
MIN_BUDGET = 50
MAX_PER_URL = 10
CONTEXT_RESULTS = 10  # results whose passages context packs
MAX_CACHED_CHARS = 2_000_000
_LANGUAGE = re.compile(r"[a-z]{2,3}(-[a-z0-9]{2,8})?")
_SITE = re.compile(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?(/[^\s]*)?")


def _int(value: Any, name: str, low: int, high: int, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ToolArgumentError(f"{name} must be a whole number") from None
    if not low <= number <= high:
        raise ToolArgumentError(f"{name} must be between {low} and {high}")
    return number


def _query(value: Any) -> str:
    query = " ".join(str(value or "").split())
    if not query:
        raise ToolArgumentError("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise ToolArgumentError(f"query is longer than {MAX_QUERY_CHARS} characters")
    return query


class AgentTools:
    """The tools over one :class:`DocumentStore` (one per process, see :func:`agent_tools`)."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store
        self.service = store.service

    # -- search ------------------------------------------------------------------------------

    def _search(self, query: str, num: int, site: str, language: str
                ) -> tuple[SearchResult, int | None, dict[str, Any], list[str]]:
        searched = query
        if site:
            site = site.strip().lower()
            if not _SITE.fullmatch(site):
                raise ToolArgumentError("site must be a host name (or host/path)")
            searched += f" site:{site}"
        language = (language or "").strip().lower()
        if language and not _LANGUAGE.fullmatch(language):
            raise ToolArgumentError("language must be a language code such as en or pt-br")
        its, shards = self.service.shards(None)
        options = self.service.options()
        hidden = self.service.hidden_urls()
        if hidden:
            options = replace(options, hidden_urls=hidden)
        searcher = self.service.searcher(shards, options)
        result = search_with_fallback(searcher, effective_query(searched, language), num=num,
                                      snippets=False)
        parsed = self.service.parser.parse(result.searched or searched)
        terms, _ = query_word_terms(parsed)
        words = list(dict.fromkeys([*parsed.highlight, *terms]))
        return result, its, {s.name: s for s in shards}, words

    def _documents(self, result: SearchResult, its: int | None, by_name: dict[str, Any]
                   ) -> list[tuple[Any, AgentDocument | None]]:
        out = []
        for r in result.results:
            shard = by_name.get(r.shard)
            doc = self.store.result_document(shard, crawl_of(shard, its), r.url, r.doc_id)
            out.append((r, doc))
        return out

    def passages(self, doc: AgentDocument, words: list[str], limit: int) -> list[Passage]:
        if not doc.snippetable:
            return []
        page = self.store.texts.text(doc)
        heads = [(h.start, h.title) for h in page.headings]
        query = query_words(words)
        if query is None:
            return []
        return best_passages(page.text, query.pattern, limit, heads, spans=page.spans,
                             scan=query.scan, lowered=page.lowered)

    def search(self, query: Any = "", limit: Any = 10, site: Any = "", language: Any = "",
               passages: Any = 0) -> dict[str, Any]:
        query = _query(query)
        num = _int(limit, "limit", 1, MAX_RESULTS, 10)
        count = _int(passages, "passages", 0, MAX_PASSAGES, 0)
        result, its, by_name, words = self._search(query, num, str(site or ""),
                                                   str(language or ""))
        results = []
        for r, doc in self._documents(result, its, by_name):
            item: dict[str, Any] = {"id": doc.id if doc else None, "url": r.url,
                                    "title": doc.title if doc else (r.plain_title or r.url),
                                    "crawl_date": doc.crawl_date if doc else None,
                                    "score": round(float(r.score), 6)}
            if count:
                item["passages"] = ([_passage(p) for p in self.passages(doc, words, count)]
                                    if doc else [])
            results.append(item)
        return {"query": query, "searched": result.searched or result.query,
                "total": result.total, "fallback": result.fallback or None,
                "crawl": its, "results": results}

    # -- read and cached ---------------------------------------------------------------------

    def read(self, ref: Any = "", start: Any = 0, max_chars: Any = DEFAULT_READ,
             section: Any = "") -> dict[str, Any]:
        first = _int(start, "start", 0, 1 << 40, 0)
        size = _int(max_chars, "max_chars", 1, MAX_READ, DEFAULT_READ)
        doc = self.store.find(str(ref or ""))
        page = self.store.texts.text(doc)
        text = page.text
        lo, hi = 0, len(text)
        section = " ".join(str(section or "").split())[:200]
        if section:
            span = section_span(text, section)
            if span is None:
                raise ToolArgumentError(f"the page has no section {section!r}; its sections: "
                                        + "; ".join(h.title for h in page.headings[:40]))
            lo, hi = span
        begin = max(first, lo)
        end = min(hi, begin + size)
        if end < hi:  # end the page at a line or a space when one is near
            cut = max(text.rfind("\n", begin, end), text.rfind(" ", begin, end))
            if cut > begin + size // 2:
                end = cut + 1
        return {**doc.cite(), "source": page.source, "start": begin, "end": end,
                "total_chars": len(text), "next_start": end if end < hi else None,
                "text": text[begin:end],
                "sections": [{"title": h.title, "level": h.level, "start": h.start}
                             for h in page.headings if lo <= h.start < hi]}

    def cached(self, ref: Any = "") -> dict[str, Any]:
        doc = self.store.find(str(ref or ""))
        data = doc.cached_bytes()
        page = self.store.texts.text(doc)
        original = decode(data) if data else None
        truncated = original is not None and len(original) > MAX_CACHED_CHARS
        return {**doc.cite(), "mime_type": doc.mime_type, "source": page.source,
                "original": original[:MAX_CACHED_CHARS] if original else None,
                "original_truncated": truncated, "text": page.text}

    # -- context -----------------------------------------------------------------------------

    def context(self, query: Any = "", token_budget: Any = DEFAULT_BUDGET,
                max_passages_per_url: Any = 2) -> dict[str, Any]:
        query = _query(query)
        budget = _int(token_budget, "token_budget", MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET)
        per_url = _int(max_passages_per_url, "max_passages_per_url", 1, MAX_PER_URL, 2)
        result, its, by_name, words = self._search(query, CONTEXT_RESULTS, "", "")
        candidates: list[Candidate[AgentDocument]] = []
        for rank, (_, doc) in enumerate(self._documents(result, its, by_name)):
            if doc is None:
                continue
            for p in self.passages(doc, words, per_url * 2):
                candidates.append(Candidate(doc.url, p, doc, rank))
        kept, used = pack(candidates, budget, per_url)
        return {"query": query, "searched": result.searched or result.query,
                "token_budget": budget, "tokens_used": used, "crawl": its,
                "passages": [{**c.source.cite(), **_passage(c.passage)} for c in kept]}


def _passage(p: Passage) -> dict[str, Any]:
    return {"start": p.start, "end": p.end, "text": p.text, "section": p.section,
            "score": p.score}


def agent_tools() -> AgentTools:
    """This process's tools (the ``ranking`` app's)."""
    return apps.get_app_config("ranking").agent_tools
