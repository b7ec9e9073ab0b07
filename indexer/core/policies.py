"""The seed policies of the seed "Per-page crawling policy" (the Nutch thread, seed 004): one
enum for the crawler,
which spreads a seed's policy to the pages it reaches while it schedules them, and for link
analysis, which spreads it through the web graph as trust.

Layer: ``indexer.core`` (pure Python), below both of its users (``crawler.core.definition.policy``
and ``crawler.core.scheduler``; ``linkgraph.core.trust``). The admin stores the value (the
``SeedSite.policy`` column holds these strings).
"""

from __future__ import annotations

import enum


class CrawlPolicy(enum.StrEnum):
    """Seed 004's per-seed crawling policy, spread from a seed to the pages it reaches."""

    FAVOR = "favor"
    DEFAULT = "default"
    DISTRUST = "distrust"
