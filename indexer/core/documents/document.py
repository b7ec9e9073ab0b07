"""The unit a fetcher ships and a queue server's indexer appends: one document of the index.

Layer: ``indexer.core``. ``crawler.core`` builds these from processed pages (pages, and the link
documents made from their outlinks); ``indexer.core.bundle.writer`` appends them to the active partition.
A batch of them is the seed's "mini inverted index": every document already carries its terms with
positions, so the queue server only merges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ids import DocType, make_doc_id

# "Fancy hits" (Brin and Page, "The Anatomy of a Large-Scale Hypertextual Web Search Engine"):
# the words of a page's title and of anchor texts are also posted as the meta word
# ``fancy:<term>``, the short barrel a query reads before the full one (ranking.core.postings.tiers).
FANCY_PREFIX = "fancy:"


def fancy_words(terms: Sequence[str]) -> list[str]:
    """The fancy-hit meta words of ``terms`` (each distinct term once, in order)."""
    return [FANCY_PREFIX + t for t in dict.fromkeys(terms)]


@dataclass(frozen=True, slots=True)
class IndexDocument:
    """One document to index.

    Invariants:
    * ``terms`` maps each (already stemmed/normalised) term to its sorted, strictly increasing
      word positions (0-based) in the text that was indexed (title first, then description).
    * ``meta_words`` are terms such as ``site:example.com`` that carry no positions; they are
      posted with frequency 0.
    * ``region_weights`` is a sorted list of (last position, weight): positions up to and
      including ``last position`` (after the previous pair's) weigh ``weight``.
    * ``summary`` is JSON-serialisable (title, description, url, lang, links, ...).
    * ``length`` is the number of word positions (l_d of the DFR formula).
    """

    url: str
    host: str
    doc_type: DocType
    text_hash: bytes  # 7 bytes, see ``ids.hash7``: pages with equal text group together
    summary: Mapping[str, Any]
    terms: Mapping[str, Sequence[int]]
    length: int
    meta_words: tuple[str, ...] = ()
    region_weights: tuple[tuple[int, float], ...] = ()
    classifier_scores: tuple[float, ...] = ()
    cached_page: bytes | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def doc_id(self) -> bytes:
        return make_doc_id(self.url, self.doc_type, self.text_hash, self.host)
