"""The crawl queue's records: a queued url with its line format, and a discovered link as the
journal keeps it.

Layer: ``crawler.core.scheduler``. A :class:`QueuedUrl` is one line of a url file (see
:mod:`.lanes`): tab-separated ``url, depth, weight, tier, flags, incoming, policy, policy depth,
anchor``.

* ``weight`` is the link index ``i`` the url came with (its weight, echoed to fetchers);
* ``tier`` the tier it was filed in (-1 while waiting for robots);
* ``flags``: bit 1 sitemap (:data:`FLAG_SITEMAP`), bit 2 non-HTML (:data:`FLAG_NON_HTML`);
* ``incoming`` the WEIGHTED_INCOMING_URLS increment to apply when it enters UrlQueue;
* ``policy`` the crawl policy code (``f`` favor, ``d`` default, ``x`` distrust, see
  :mod:`crawler.core.definition.policy`) and ``policy_depth`` its depth;
* ``anchor`` the anchor texts (whitespace folded, joined by `` | ``; for needy-query matching).

Lines of the older six-field form read as default policy without anchor text. A
:class:`LinkItem` is one url of an ``add`` call as the journal stores it (a plain tuple, see
:mod:`.durable.journal`); journals written before policies and anchors stop after ``opic_cash``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from crawler.core.definition import policy as pol
from indexer.core.policies import CrawlPolicy

FLAG_SITEMAP = 1
FLAG_NON_HTML = 2
DEFAULT_POLICY = pol.CODE[CrawlPolicy.DEFAULT]
ANCHOR_SEPARATOR = " | "
MAX_ANCHOR_CHARS = 200


def clean_anchor(text: str) -> str:
    """An anchor text as records keep it: whitespace folded, at most 200 characters."""
    return " ".join(text.split())[:MAX_ANCHOR_CHARS]


@dataclass(frozen=True, slots=True)
class QueuedUrl:
    """One url in a url file (the module docstring gives the fields and the line format)."""

    url: str
    depth: int
    weight: float
    tier: int
    flags: int = 0
    incoming: float = 0.0
    policy: str = DEFAULT_POLICY
    policy_depth: int = 0
    anchor: str = ""

    def to_line(self) -> str:
        """The record's line (no newline). ``repr`` keeps floats exact across a round trip."""
        return (f"{self.url}\t{self.depth}\t{self.weight!r}\t{self.tier}\t{self.flags}"
                f"\t{self.incoming!r}\t{self.policy}\t{self.policy_depth}\t{self.anchor}")

    @classmethod
    def from_line(cls, line: str) -> QueuedUrl:
        fields = line.split("\t")
        try:
            url, depth, weight, tier, flags, incoming, policy, policy_depth, anchor = fields
        except ValueError:   # the older six-field form
            return cls(fields[0], int(fields[1]), float(fields[2]), int(fields[3]),
                       int(fields[4]), float(fields[5]))
        return cls(url, int(depth), float(weight), int(tier), int(flags), float(incoming),
                   policy, int(policy_depth), anchor)

    @property
    def is_sitemap(self) -> bool:
        return bool(self.flags & FLAG_SITEMAP)

    @property
    def is_html(self) -> bool:
        return not self.flags & FLAG_NON_HTML

    @property
    def policy_name(self) -> str:
        """The policy's name as schedule entries carry it (``favor``, ``default``...)."""
        return pol.FROM_CODE[self.policy].value

    @property
    def anchors(self) -> list[str]:
        return self.anchor.split(ANCHOR_SEPARATOR) if self.anchor else []


class LinkItem(NamedTuple):
    """One url of an ``add`` call, as the journal records it (:meth:`to_journal`: a plain
    tuple in field order). Immutable; a named tuple rather than a dataclass because every
    discovered url makes one twice (journal and apply) and a tuple is built ten times faster.

    ``source_cld`` is the linking page's company-level domain ("" for seeds); ``source_weight``
    and ``source_tier`` are that page's weight and tier; ``opic_cash`` the link's cash share.
    """

    url: str
    depth: int
    link_index: int
    source_cld: str
    source_weight: float
    source_tier: int
    is_sitemap: bool
    is_html: bool
    opic_cash: float
    policy: str = DEFAULT_POLICY
    policy_depth: int = 0
    anchor: str = ""

    def to_journal(self) -> tuple[Any, ...]:
        return tuple(self)

    @classmethod
    def from_journal(cls, item: tuple[Any, ...]) -> LinkItem:
        return cls(*item)

    @property
    def flags(self) -> int:
        return (FLAG_SITEMAP if self.is_sitemap else 0) | (0 if self.is_html else FLAG_NON_HTML)

    def merged(self, other: LinkItem) -> LinkItem:
        """This link with another link to the same url folded in: the most trusting policy
        wins (policy rule 1), anchor texts are kept together (at most five)."""
        best = pol.more_trusting((pol.FROM_CODE[self.policy], self.policy_depth),
                                 (pol.FROM_CODE[other.policy], other.policy_depth))
        anchor = self.anchor
        if (other.anchor and other.anchor not in anchor.split(ANCHOR_SEPARATOR)
                and anchor.count("|") < 4):
            anchor = f"{anchor}{ANCHOR_SEPARATOR}{other.anchor}" if anchor else other.anchor
        return self._replace(policy=pol.CODE[best[0]], policy_depth=best[1], anchor=anchor)
