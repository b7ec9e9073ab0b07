"""Reads of the search-index choice: which crawls a search reads, with their weights.

Layer: Django glue of the ``searchindex`` app (reads only). The search service
(``ranking.search_service``) caches :func:`search_index_get`, asks :func:`crawl_mix_get` for
a query's ``m:NAME`` and :func:`crawl_open_to_anyone` for an anonymous ``its=``; the admin shows
the choice's label.

Who may search what: staff users any crawl or mix; anyone else the index chosen for search,
a crawl mix marked public (and so the crawls in it), and a crawl marked public.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from crawler.core.definition.crawl import ENDED_STATES
from crawler.models import Crawl

from .models import CrawlMix, SearchIndex


@dataclass(frozen=True, slots=True)
class IndexChoice:
    """What a search reads: crawls by timestamp with the weight of their scores (``parts``
    empty: the newest index on disk), and how to name it to the user."""

    kind: str                                # crawl, mix, newest or default
    label: str
    parts: tuple[tuple[int, float], ...] = ()

    @property
    def timestamps(self) -> tuple[int, ...]:
        return tuple(t for t, _ in self.parts)


NEWEST_ON_DISK = IndexChoice("default", "the newest index")


def _crawl_label(crawl: Crawl) -> str:
    return f"crawl {crawl.name!r} ({crawl.timestamp})"


def _mix_choice(mix: CrawlMix, kind: str = "mix") -> IndexChoice:
    members = list(mix.members.select_related("crawl"))
    return IndexChoice(kind, f"crawl mix {mix.name!r} ("
                       + ", ".join(_crawl_label(m.crawl) for m in members) + ")",
                       tuple((m.crawl.timestamp, float(m.weight)) for m in members))


def _finished_crawls():
    """Crawls that ended with documents, newest first; a repeat that ended without replacing
    its crawl (stopped half-way) is left out: its index is half built."""
    return (Crawl.objects.filter(status__in=ENDED_STATES, documents_indexed__gt=0)
            .exclude(repeat_of__isnull=False, repeat_of__replaced_at__isnull=True)
            .order_by("-timestamp"))


def _newest_finished_choice() -> IndexChoice:
    crawl = _finished_crawls().first()
    if crawl is None:
        return NEWEST_ON_DISK
    return IndexChoice("newest", _crawl_label(crawl), ((crawl.timestamp, 1.0),))


ALL_CRAWLS_MAX = 50  # "every finished crawl": the newest ones, a search reads each crawl's index


def _all_finished_choice() -> IndexChoice:
    """Every crawl that ended with documents (the newest ALL_CRAWLS_MAX), each weighted 1; a
    crawl a finished repeat replaced is left out (the repeat holds its pages)."""
    crawls = list(_finished_crawls().filter(replaced_at__isnull=True)[:ALL_CRAWLS_MAX])
    if not crawls:
        return NEWEST_ON_DISK
    label = (f"every finished crawl ({len(crawls)}: "
             + ", ".join(_crawl_label(c) for c in crawls[:5])
             + (", ..." if len(crawls) > 5 else "") + ")")
    return IndexChoice("all", label, tuple((c.timestamp, 1.0) for c in crawls))


def finished_crawls(limit: int) -> list[tuple[int, str]]:
    """(timestamp, label) of at most ``limit`` crawls that ended with documents, newest
    first: where the search page looks for a ``site:`` host the index searched lacks."""
    return [(c.timestamp, _crawl_label(c)) for c in _finished_crawls()[:limit]]


def search_index_pinned() -> bool:
    """Whether an admin pinned the index chosen for search (a crawl or a crawl mix): a crawl
    that ends is then not searched by itself. False while search follows the newest finished
    crawl (the automatic choice, or no choice yet) or every finished crawl."""
    return SearchIndex.objects.filter(pk=1).exclude(
        mode__in=(SearchIndex.Mode.NEWEST, SearchIndex.Mode.ALL)).exists()


def search_index_follows_every_crawl() -> bool:
    """Whether the choice is "every finished crawl": a crawl that ends is searched with the
    others instead of in their place."""
    return SearchIndex.objects.filter(pk=1, mode=SearchIndex.Mode.ALL).exists()


def search_index_get() -> IndexChoice:
    """The index chosen for search (``SearchIndex``): a crawl, a mix, the newest finished
    crawl with documents (a half-built repeat left out), or every finished crawl
    (:func:`_all_finished_choice`, as a mix of equal weights); without a choice (or when the chosen
    crawl or mix was deleted), the newest index on disk."""
    row = SearchIndex.objects.select_related("crawl", "mix").filter(pk=1).first()
    if row is None:
        return NEWEST_ON_DISK
    if row.mode == SearchIndex.Mode.NEWEST:
        return _newest_finished_choice()
    if row.mode == SearchIndex.Mode.ALL:
        return _all_finished_choice()
    if row.mode == SearchIndex.Mode.MIX and row.mix is not None:
        return _mix_choice(row.mix)
    if row.mode == SearchIndex.Mode.CRAWL and row.crawl is not None:
        return IndexChoice("crawl", _crawl_label(row.crawl), ((row.crawl.timestamp, 1.0),))
    return NEWEST_ON_DISK


def crawl_mix_get(name: str, *, anyone: bool = False) -> IndexChoice | None:
    """The crawl mix named ``name`` (case-insensitive), or None; with ``anyone`` (an anonymous
    search) None also when the mix is neither public nor the one chosen for search."""
    mix = CrawlMix.objects.filter(name__iexact=name.strip()).first()
    if mix is None or (anyone and not mix.public and not SearchIndex.objects.filter(
            pk=1, mode=SearchIndex.Mode.MIX, mix=mix).exists()):
        return None
    return _mix_choice(mix)


def crawl_open_to_anyone(timestamp: int) -> bool:
    """Whether anyone (not only staff users) may search crawl ``timestamp``: it is public, in
    a public crawl mix, or in the index chosen for search. A timestamp no crawl has is not."""
    if Crawl.objects.filter(timestamp=timestamp).filter(
            Q(public=True) | Q(mix_memberships__mix__public=True)).exists():
        return True
    return timestamp in search_index_get().timestamps
