"""The sections of a result's page that match the query: links to ``<page url>#<anchor>``
shown under the result (issue 36, sections as answers).

Layer: ``ranking.core``. Pure: reads the ``sections`` field of a page's stored summary
(:mod:`indexer.core.documents.sections`, written by the sections plugin) and the query's
terms. A section matches when its heading holds every distinct term of the query (analysed as
the index analyses text: ``Replication Slots`` holds ``replication slot``); at most
:data:`MAX_SHOWN`, the headings holding the fewest other words first (the most specific),
then in page order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from indexer.core.documents.sections import decode_sections
from indexer.core.text import TextAnalyzer

MAX_SHOWN = 3


def matching_sections(summary: Mapping[str, Any], terms: Sequence[str],
                      analyzer: TextAnalyzer, lang: str | None = None,
                      limit: int = MAX_SHOWN) -> list[tuple[str, str]]:
    """(``<page url>#<anchor>``, heading) of the sections of the page whose stored summary is
    ``summary`` that match the query terms ``terms`` (see the module docstring), the headings
    analysed in ``lang`` (the query's; else the page's)."""
    wanted = set(terms)
    url = str(summary.get("url", "")).partition("#")[0]
    if not wanted or not url:
        return []
    lang = lang or str(summary.get("lang") or "") or None
    found = []
    for at, (anchor, heading) in enumerate(decode_sections(summary)):
        words = analyzer.terms(heading, lang)
        if wanted.issubset(words):
            found.append((len(words) - len(wanted), at, f"{url}#{anchor}", heading))
    found.sort()
    return [(link, heading) for _, _, link, heading in found[:limit]]


__all__ = ["MAX_SHOWN", "matching_sections"]
