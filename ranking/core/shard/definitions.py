"""The definition and topic bonuses: a page that defines what the whole query names, or one of
whose headings (or defined terms) is the whole query (issue 36).

Layer: ``ranking.core``. The keys are :mod:`indexer.core.signals.definitions`'s, written at
crawl time as the meta words ``defines:<name>`` (the API names plugin) and ``topic:<key>``
(the topics plugin). A query of one word (``Persistent.merge``, ``CACHES``) has a name key:
its text in lower case (:func:`name_query_key`); a query of loose words only (no quoted
phrase, one disjunct) has a topic key: its terms, after the parser dropped the stop words,
joined as the index joins a label's (:func:`query_key`). Each candidate holding the meta word
of the query's key gets Page Options' ``definition_bonus`` (``defines:``) or ``topic_bonus``
(``topic:``), added to the score S beside the url and title bonuses::

    Def(d) = definition_bonus * [d holds defines:<key>] + topic_bonus * [d holds topic:<key>]

Both are known per doc_map entry before any position is read (one posting list each, decoded
whole and kept by the shard), so the exact search's and block-max's bounds take them exactly
(:func:`entry_bonus`): no pruning bound changes for a query without such a key.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from indexer.core.signals.definitions import DEFINES, TOPIC, definition_key, name_key
from ranking.core.options import SearchOptions
from ranking.core.postings.blocks import key_index, key_partition
from ranking.core.postings.iterators import DecodedList
from ranking.core.query.parser import ParsedQuery

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class ListSource(Protocol):
    def decoded_list(self, term: str, positional: bool, whole: bool = False
                     ) -> DecodedList | None:
        """A term's whole posting list, decoded (None: not kept)."""


def name_query_key(parsed: ParsedQuery) -> str | None:
    """The name key of a query of one word and nothing else (see the module docstring), else
    None."""
    if len(parsed.disjuncts) != 1 or parsed.disjuncts[0].meta:
        return None
    text = parsed.text.strip()
    if not text or len(text.split()) != 1 or text.startswith(("-", '"')):
        return None
    return name_key(text)


def query_key(parsed: ParsedQuery) -> str | None:
    """The topic key of a query of loose words only (see the module docstring), else None."""
    if len(parsed.disjuncts) != 1:
        return None
    conjunct = parsed.disjuncts[0]
    if conjunct.phrases or not conjunct.terms:
        return None
    return definition_key(conjunct.terms, frozenset())


_PREFIXES = (DEFINES, TOPIC)


def _bonuses(options: SearchOptions) -> tuple[float, float]:
    return float(options.definition_bonus), float(options.topic_bonus)


def bonus_lists(source: ListSource, parsed: ParsedQuery, options: SearchOptions
                ) -> list[tuple[int, IntArray, float]]:
    """(0 for ``defines:``, 1 for ``topic:``, the ascending keys of the entries holding the
    query's key, their bonus) of each of the two with a non-zero bonus and some entry."""
    out = []
    for row, (prefix, bonus) in enumerate(zip(_PREFIXES, _bonuses(options), strict=True)):
        key = name_query_key(parsed) if prefix == DEFINES else query_key(parsed)
        if not bonus or key is None:
            continue
        got = source.decoded_list(f"{prefix}:{key}", False, True)
        if got is not None and got.keys.size:
            out.append((row, got.keys, bonus))
    return out


def definition_bonuses(source: ListSource, parsed: ParsedQuery, keys: IntArray,
                       options: SearchOptions) -> FloatArray:
    """(2, m): the definition and topic bonuses of the ``m`` candidates whose keys are
    ``keys``."""
    out = np.zeros((2, keys.size))
    if not keys.size:
        return out
    for row, held, bonus in bonus_lists(source, parsed, options):
        at = np.minimum(np.searchsorted(held, keys), held.size - 1)
        out[row, held[at] == keys] = bonus
    return out


def entry_bonus(lists: list[tuple[int, IntArray, float]], partition: int, n: int
                ) -> FloatArray:
    """The definition and topic bonuses together of every doc_map entry of ``partition``
    (``n`` entries), from :func:`bonus_lists`."""
    out = np.zeros(n)
    for _, held, bonus in lists:
        mine = held[key_partition(held) == partition]
        out[key_index(mine)] += bonus
    return out


__all__ = ["bonus_lists", "definition_bonuses", "entry_bonus", "name_query_key", "query_key"]
