from __future__ import annotations

from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from .services import CrawlFacts


class LinkgraphConfig(AppConfig):
    """Link analysis (seed 002, "Nutch's new scoring and indexing framework"): the web graph,
    Loops, LinkRank, trust and the per-url score file, run by the engine itself and by the
    commands ``webgraph``, ``loops``, ``linkrank``, ``score_update`` and the dumpers.

    ``crawl_facts``: what link analysis reads of a crawl (its seeds, its live queue servers),
    given by the app that owns crawls: the crawler sets it in its ``ready()``. This app never
    imports the crawler; the commands read the crawl through this attribute and the services
    take it as an argument (see :class:`linkgraph.services.CrawlFacts`).
    """

    name = "linkgraph"
    default_auto_field = "django.db.models.BigAutoField"
    crawl_facts: CrawlFacts | None = None
