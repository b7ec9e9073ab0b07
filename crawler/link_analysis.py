"""The crawler's side of link analysis: what the linkgraph app reads of a crawl, and the
crawler's requests for a run (at a crawl's end, every LINK_ANALYSIS_EVERY_PAGES pages, the
admin's button, ``manage.py crawl``).

Layer: Django glue. The runs themselves, their lock and their record are
:mod:`linkgraph.services`; this module turns the crawler's rows into the plain values those
services take (:class:`CrawlerFacts`) and sends runs to the crawler's Celery task
(``crawler.tasks.link_analysis_task``), so that the crawler depends on link analysis and never
the other way round.

The task module calls this one, not the reverse: the function that queues a run
(``crawler.sending.send_link_analysis``) is handed to :func:`send_runs_with` when the app loads
(``CrawlerConfig.ready``), which also connects :func:`on_documents_complete` to the crawl
services' ``crawler.signals.crawl_documents_complete``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from indexer.core.policies import CrawlPolicy
from linkgraph import services as analysis
from linkgraph.core.trust import TrustSeed

from .models import Crawl
from .selectors import crawl_config_get, registered_queue_servers


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
        return {q.server_id: q.base_url for q in registered_queue_servers() if q.base_url}

    def policy_within_domain(self, timestamp: int) -> bool:
        return bool(Crawl.objects.filter(timestamp=timestamp, policy_within_domain=True)
                    .exists())

    def url_filter(self, timestamp: int) -> Callable[[str], bool] | None:
        crawl = Crawl.objects.filter(timestamp=timestamp).only("pk").first()
        if crawl is None:
            return None
        return crawl_config_get(crawl.pk).site_rules.permits


FACTS = CrawlerFacts()


class _Sender:
    """How this process queues a run: set once as the app loads (:func:`send_runs_with`)."""

    def __init__(self) -> None:
        self.send: analysis.Enqueue | None = None


_sender = _Sender()


def send_runs_with(send: analysis.Enqueue) -> None:
    """Queue runs with ``send`` (``crawler.sending.send_link_analysis``; called by
    ``CrawlerConfig.ready``)."""
    _sender.send = send


def _default_enqueue(crawl_id: int) -> None:
    if _sender.send is None:
        raise RuntimeError("link analysis runs cannot be queued before the crawler app is ready")
    _sender.send(crawl_id)


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


def on_documents_complete(sender, crawl_id: int, reason: str, **kwargs) -> None:
    """Receiver of ``crawler.signals.crawl_documents_complete``: the crawl's documents are all
    on disk once the sender's transaction commits, so its link analysis is asked for then
    (:func:`link_analysis_request` never raises)."""
    transaction.on_commit(lambda: link_analysis_request(crawl_id, reason), robust=True)
