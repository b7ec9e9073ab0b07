"""Curated results: urls pinned to a query's first results, urls and whole hosts hidden from
every result, and results whose title and snippet an operator rewrote.

Layer: ``ranking.core``. As site-search products do it (Yioop's results editor, pinned hits in
Typesense and Meilisearch): an operator pins a url at a position for one query, hides a url or
every page of a host everywhere, or gives a url the title and snippet shown for it (in place
of the computed ones, in every query; :func:`edited_text`). A pin matches the query as typed, compared in :func:`normalize_query` form, and
applies to the first page of results; a hidden url is skipped when the page of results is
chosen (:meth:`ranking.core.search.pipeline.Searcher.search` with ``SearchOptions.hidden_urls``), so
pages stay full; a hidden host (``SearchOptions.hidden_hosts``) is skipped the same way.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

R = TypeVar("R")


def normalize_query(text: str) -> str:
    """``text`` as pins compare queries: NFKC, case-folded, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True, slots=True)
class Curation:
    """Pins by normalised query (``(url, position)`` pairs, position from 1), hidden urls,
    hidden hosts (lower case, no trailing dot) and edits: url -> (title, snippet), plain
    text, either "" to keep the computed one."""

    pins: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()
    hidden_hosts: frozenset[str] = frozenset()
    edits: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def pins_for(self, query: str) -> tuple[tuple[str, int], ...]:
        return self.pins.get(normalize_query(query), ())


def place_pins(results: Sequence[R], pins: Sequence[tuple[str, int]],
               url_of: Callable[[R], str], found: Mapping[str, R], num: int) -> list[R]:
    """``results`` with each pinned url at its position (1-based, in position order; a pinned
    url already among the results moves there, else ``found[url]`` is put there; a pin whose
    url was not found is left out), cut to ``num``."""
    placed = {url for url, _ in pins if url in found}
    rest = [r for r in results if url_of(r) not in placed]
    for url, position in sorted(pins, key=lambda p: p[1]):
        if url in found:
            rest.insert(min(max(position, 1) - 1, len(rest)), found[url])
    return rest[:num]


def edited_text(edit: tuple[str, str], title_html: str, snippet_html: str
                ) -> tuple[str, str, str]:
    """(title HTML, snippet HTML, plain title) of a result edited with ``edit`` (plain text
    (title, snippet)): the edited parts escaped, without highlighting; a part left "" keeps
    the computed HTML (and "" as plain title, meaning "unchanged")."""
    title, text = edit
    return (html.escape(title) if title else title_html,
            html.escape(text) if text else snippet_html,
            title)
