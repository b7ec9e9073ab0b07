"""Keys of what a page defines and of its headings, matched whole against a query (issue 36).

Layer: ``indexer.core`` (analyses text), below both sides: the indexing plugin
``crawler.core.processing.plugins.definitions`` writes the keys as meta words of a page, and
the search (``ranking.core.shard.definitions``) looks up the key of a query and gives the
pages holding it a bonus. The two sides make a key the same way, :func:`definition_key`.

A documentation reader who types the name of a thing wants the page that defines it, and one
who types the subject of a section wants the page holding that section. Documentation search
engines answer the first from their object inventory (Sphinx's ``objects.inv``, DevDocs'
entries) and the second from their records per heading. Here both are exact matches of the
whole query against a label the page gives itself:

* ``defines:<name>``: a name the page defines (an API object, a module, a setting: the
  anchors ``crawler.core.processing.plugins.api_names`` reads), and for a dotted name its
  trailing parts of two and three components too (``Persistent.merge`` is how one asks for
  ``celery.worker.state.Persistent.merge``), as written, in lower case (:func:`name_key`):
  a name is matched exactly, not by stems (``Scheduler.schedule`` is not
  ``schedules.schedule``, nor the setting ``CACHES`` the template tag ``cache``); a query
  has a name key when it is one word;
* ``topic:<key>``: the text of one of its headings (``h1`` to ``h6``, the section number
  left out) or a term it defines (HTML's ``<dfn>``, a glossary entry's ``<dt>``, DocBook's
  ``firstterm`` and ``glossterm``), when that label has two key terms or more: a one-word
  heading ("Caching", "Examples") is on too many pages to tell them apart.

A topic key is the label's terms as the index analyses them (stemmed, in order), without the
stop words when others remain (as the query parser drops them from a query's loose words),
joined by ``_``; at most :data:`MAX_KEY_TERMS` terms (:func:`definition_key`). A query has a
topic key when it is loose words only (no quoted phrase, no ``|``): those words' terms,
joined the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFINES = "defines"  # meta word prefix: a name the page defines
TOPIC = "topic"      # meta word prefix: a heading of the page or a term it defines
MAX_KEY_TERMS = 8    # a longer label is no query's whole text
MAX_KEY_CHARS = 150


def name_key(name: str) -> str | None:
    """The key of a defined name (or of a one-word query): lower case, white space as ``_``
    (the ``api:`` meta words' spelling); None when empty or longer than
    :data:`MAX_KEY_CHARS`."""
    key = "_".join(name.lower().split())
    return key if key and len(key) <= MAX_KEY_CHARS else None


def definition_key(terms: Sequence[str], stop: frozenset[str], min_terms: int = 1) -> str | None:
    """The key of a label (or a query) whose analysed terms are ``terms``: the terms without
    the stop words when others remain, joined by ``_``; None when fewer than ``min_terms``
    or more than :data:`MAX_KEY_TERMS` are left, or the key is longer than
    :data:`MAX_KEY_CHARS`."""
    kept = [t for t in terms if t not in stop] or list(terms)
    if not kept or len(kept) < min_terms or len(kept) > MAX_KEY_TERMS:
        return None
    key = "_".join(kept)
    return key if len(key) <= MAX_KEY_CHARS and " " not in key else None


__all__ = ["DEFINES", "MAX_KEY_TERMS", "TOPIC", "definition_key", "name_key"]
