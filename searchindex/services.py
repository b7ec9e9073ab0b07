"""Writes of the search-index choice: the admin's choice, and the choice kept in step with the
crawls as they start, end and are repeated.

Layer: Django glue of the ``searchindex`` app. :func:`search_index_use` is what the admin
calls. The ``on_crawl_*`` receivers are connected to the crawl lifecycle signals
(:mod:`crawler.signals`) in :meth:`searchindex.apps.SearchIndexConfig.ready`; the crawl
services send those inside their own transactions, so each change here commits or rolls back
with the crawl's.
"""

from __future__ import annotations

import logging

from django.db import transaction

from crawler.core.definition.crawl import ENDED_STATES, CrawlStatus
from crawler.models import Crawl
from crawler.services import CrawlServiceError

from .models import CrawlMix, CrawlMixMember, SearchIndex

logger = logging.getLogger(__name__)


class SearchIndexError(CrawlServiceError):
    """A choice of search index that cannot be made; the message says why, for the admin."""


@transaction.atomic
def search_index_use(mode: str, crawl_id: int | None = None,
                     mix_id: int | None = None) -> SearchIndex:
    """Choose the index the search page answers from: a crawl (``mode`` "crawl"), a crawl mix
    ("mix"), always the newest finished crawl ("newest") or every finished crawl ("all").
    Kept in the database, so the choice survives restarts. A crawl or a mix is pinned: a new
    crawl never changes it; with "newest" each crawl that ends with documents is searched
    instead of the one before, with "all" besides the others."""
    try:
        mode = SearchIndex.Mode(mode)
    except ValueError:
        raise SearchIndexError(f"unknown search index mode {mode!r}") from None
    crawl = mix = None
    if mode == SearchIndex.Mode.CRAWL:
        crawl = Crawl.objects.filter(pk=crawl_id).first()
        if crawl is None:
            raise SearchIndexError(f"crawl {crawl_id} does not exist")
        if crawl.status == CrawlStatus.NEW:
            raise SearchIndexError(f"crawl {crawl.name!r} has not started: it has no index")
    elif mode == SearchIndex.Mode.MIX:
        mix = CrawlMix.objects.filter(pk=mix_id).first()
        if mix is None:
            raise SearchIndexError(f"crawl mix {mix_id} does not exist")
        if not mix.members.exists():
            raise SearchIndexError(f"crawl mix {mix.name!r} has no crawls: add at least one")
    row, _ = SearchIndex.objects.select_for_update().get_or_create(pk=1)
    row.mode, row.crawl, row.mix = mode, crawl, mix
    row.save()
    logger.info("search index is now %s", row)
    return row


def _first_choice(crawl: Crawl | None = None) -> None:
    """When no index was chosen for search, the first crawl that ends with documents makes
    the choice "the newest finished crawl" (``crawl`` as it ends, or, as another crawl starts
    in case the ended crawl's counters came late, the newest ended crawl with documents):
    from then on each crawl that ends with documents is searched, until an admin pins a crawl
    or a mix (issue 39: a second crawl was never searched, and nothing said why)."""
    if SearchIndex.objects.filter(pk=1).exists():
        return
    if crawl is None:
        crawl = (Crawl.objects.filter(status__in=ENDED_STATES, documents_indexed__gt=0)
                 .order_by("-timestamp").first())
    if crawl is not None and crawl.documents_indexed > 0:
        SearchIndex.objects.create(pk=1, mode=SearchIndex.Mode.NEWEST)
        logger.info("search index is now the newest finished crawl (crawl %s ended with "
                    "documents)", crawl.pk)


def on_crawl_starting(sender, crawl: Crawl, **kwargs) -> None:
    """A crawl starts: the index searched so far stays searched."""
    _first_choice()


def on_crawl_ended(sender, crawl: Crawl, **kwargs) -> None:
    """A crawl ended: it is the first choice if none was made and it has documents."""
    _first_choice(crawl)


def on_crawl_repeating(sender, crawl: Crawl, **kwargs) -> None:
    """``crawl`` starts over: without a choice search reads the newest index on disk, which
    would be the half-built repeat's, so search follows the newest finished crawl (the
    repeated one until the repeat ends), as after the first crawl with documents."""
    if not SearchIndex.objects.filter(pk=1).exists():
        SearchIndex.objects.create(pk=1, mode=SearchIndex.Mode.NEWEST)


def on_crawl_replaced(sender, old: Crawl, repeat: Crawl, **kwargs) -> None:
    """``repeat`` takes ``old``'s place wherever search reads it: the index chosen for search
    and the crawl mixes (a mix that has both keeps the repeat's own weight)."""
    SearchIndex.objects.filter(pk=1, mode=SearchIndex.Mode.CRAWL, crawl=old).update(
        crawl=repeat)
    taken = set(CrawlMixMember.objects.filter(crawl=repeat).values_list("mix_id", flat=True))
    CrawlMixMember.objects.filter(crawl=old).exclude(mix_id__in=taken).update(crawl=repeat)
