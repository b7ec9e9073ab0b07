"""The crawler's side of link analysis: what the linkgraph app reads of a crawl, and the
crawler's requests for a run (at a crawl's end, every LINK_ANALYSIS_EVERY_PAGES pages, the
admin's button, ``manage.py crawl``).

Layer: Django glue. The runs themselves, their lock and their record are
:mod:`linkgraph.services`; this module turns the crawler's rows into the plain values those
services take (:class:`CrawlerFacts`) and sends runs to the crawler's Celery task
(``crawler.tasks.link_analysis_task``), so that the crawler depends on link analysis and never
the other way round.
"""

from __future__ import annotations

from indexer.core.policies import CrawlPolicy
from linkgraph import services as analysis
from linkgraph.core.trust import TrustSeed

from .models import Crawl


class CrawlerFacts:
    """:class:`linkgraph.services.CrawlFacts` read from the crawler's models (stateless)."""

    def pages_fetched(self, crawl_id: int) -> int | None:
        return Crawl.objects.filter(pk=crawl_id).values_list("pages_fetched", flat=True).first()

    def timestamp(self, crawl_id: int) -> int | None:
        return Crawl.objects.filter(pk=crawl_id).values_list("timestamp", flat=True).first()

    def seeds(self, timestamp: int) -> list[TrustSeed]:
        crawl = Crawl.objects.filter(timestamp=timestamp).only("pk").first()
        if crawl is None:
            return []
        return [TrustSeed(s.url, CrawlPolicy(str(s.policy)), float(s.trust_weight))
                for s in crawl.seeds.order_by("id")]

    def live_shards(self) -> dict[int, str]:
        from .services import live_queue_servers

        return {q.server_id: q.base_url for q in live_queue_servers() if q.base_url}


FACTS = CrawlerFacts()


def _default_enqueue(crawl_id: int) -> None:
    from .tasks import send_link_analysis

    send_link_analysis(crawl_id)


def link_analysis_request(crawl_id: int, reason: str,
                          enqueue: analysis.Enqueue | None = None) -> str:
    """:func:`linkgraph.services.link_analysis_request` of this crawl, sent to the crawler's
    task unless ``enqueue`` is given."""
    return analysis.link_analysis_request(
        crawl_id, reason, FACTS, enqueue if enqueue is not None else _default_enqueue)


def link_analysis_maybe_periodic(crawl_id: int) -> str | None:
    """:func:`linkgraph.services.link_analysis_maybe_periodic` of this crawl."""
    return analysis.link_analysis_maybe_periodic(crawl_id, FACTS, _default_enqueue)


def link_analysis_run(crawl_id: int, enqueue: analysis.Enqueue | None = None) -> str:
    """:func:`linkgraph.services.link_analysis_run` of this crawl, in this process."""
    return analysis.link_analysis_run(crawl_id, FACTS, enqueue)
