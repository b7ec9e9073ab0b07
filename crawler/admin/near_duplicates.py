"""The admin's near-duplicates page of a crawl: its clusters, each with its canonical.

Layer: Django glue. ``CrawlAdmin.get_urls`` adds :func:`near_duplicate_urls`; the page needs
the crawl's view permission. It reads the crawl's clusters file on this machine
(``<WORK_DIRECTORY>/linkgraph/<ts>/near_duplicates.npz``, written by the link analysis:
:mod:`indexer.core.signals.near_clusters`), largest clusters first, a page at a time. Before
the first link analysis there is no file: the page says so.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path

from crawler.models import Crawl
from indexer.core.runtime.workdir import near_duplicates_path
from indexer.core.signals.near_clusters import cached_near_duplicates

CLUSTERS_PER_PAGE = 50


def near_duplicate_urls(model_admin: ModelAdmin) -> list[URLPattern]:
    def view(request: HttpRequest, crawl_id: int) -> TemplateResponse:
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        if not model_admin.has_view_permission(request, crawl):
            raise PermissionDenied
        clusters = cached_near_duplicates(
            near_duplicates_path(settings.WORK_DIRECTORY, crawl.timestamp)).get()
        try:
            page = max(0, int(request.GET.get("page", "0")))
        except ValueError:
            page = 0
        shown = []
        total = len(clusters) if clusters is not None else 0
        if clusters is not None:
            start = page * CLUSTERS_PER_PAGE
            for number in range(start, min(total, start + CLUSTERS_PER_PAGE)):
                members = clusters.members(number)
                shown.append({"number": number + 1, "canonical": members[0],
                              "others": members[1:]})
        return TemplateResponse(request, "admin/crawler/crawl/near_duplicates.html", {
            **model_admin.admin_site.each_context(request), "opts": Crawl._meta,
            "title": "Near-duplicate clusters", "crawl": crawl, "clusters": shown,
            "total": total, "meta": clusters.meta if clusters is not None else None,
            "page": page, "next_page": page + 1 if (page + 1) * CLUSTERS_PER_PAGE < total
            else None, "previous_page": page - 1 if page > 0 else None})

    return [path("<int:crawl_id>/near-duplicates/", model_admin.admin_site.admin_view(view),
                 name="crawler_crawl_near_duplicates")]
