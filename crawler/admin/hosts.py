"""The admin's url and host pages of a crawl, reached from its status page: recent fetched
urls, refused urls by reason, what is queued by tier, the hosts, and one host's page with the
operator's actions (slow it down, exclude it, lift the override).

Layer: Django glue. ``CrawlAdmin.get_urls`` adds :func:`host_urls`. Every page needs the
crawl's view permission; the actions need its change permission (403 otherwise). Reads go
through ``crawler.hosts.selectors`` (keyset paging; a bad cursor is a 400), writes through
``crawler.hosts.services``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.http import urlencode

from crawler.core.queue_server.activity import REASONS, reason_label
from crawler.hosts import selectors as reads
from crawler.hosts.services import (
    HostOverrideError,
    host_origin_check,
    host_override_lift,
    host_override_set,
)
from crawler.models import Crawl


class HostPages:
    """The views, bound to the crawl's ModelAdmin (for its permissions and site)."""

    def __init__(self, model_admin: ModelAdmin) -> None:
        self.admin = model_admin

    def urls(self) -> list[URLPattern]:
        wrap = self.admin.admin_site.admin_view
        return [
            path("<int:crawl_id>/fetched/", wrap(self.fetched_view),
                 name="crawler_crawl_fetched"),
            path("<int:crawl_id>/refused/", wrap(self.refused_view),
                 name="crawler_crawl_refused"),
            path("<int:crawl_id>/queued/", wrap(self.queued_view), name="crawler_crawl_queued"),
            path("<int:crawl_id>/hosts/", wrap(self.hosts_view), name="crawler_crawl_hosts"),
            path("<int:crawl_id>/host/", wrap(self.host_view), name="crawler_crawl_host"),
        ]

    # --- helpers ------------------------------------------------------------------------

    def _crawl(self, request: HttpRequest, crawl_id: int, change: bool = False) -> Crawl:
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        allowed = (self.admin.has_change_permission(request, crawl) if change
                   else self.admin.has_view_permission(request, crawl))
        if not allowed:
            raise PermissionDenied
        return crawl

    def _render(self, request: HttpRequest, crawl: Crawl, template: str, title: str,
                **context: Any) -> TemplateResponse:
        return TemplateResponse(request, f"admin/crawler/crawl/{template}", {
            **self.admin.admin_site.each_context(request), "opts": Crawl._meta,
            "title": title, "crawl": crawl, **context})

    @staticmethod
    def _link(request: HttpRequest, **changes: str | None) -> str:
        """This page's url with some query parameters changed (None: removed)."""
        params = {k: v for k, v in request.GET.items() if k not in ("before", "after")}
        params.update({k: v for k, v in changes.items() if v is not None})
        return f"{request.path}?{urlencode(params)}"

    def _pager(self, request: HttpRequest, page: reads.Page) -> dict[str, str | None]:
        return {"older_url": page.older and self._link(request, before=page.older),
                "newer_url": page.newer and self._link(request, after=page.newer),
                "newest_url": self._link(request) if page.newer else None}

    # --- the pages ----------------------------------------------------------------------

    def fetched_view(self, request: HttpRequest, crawl_id: int) -> HttpResponse:
        crawl = self._crawl(request, crawl_id)
        try:
            page = reads.fetched_page(crawl.pk, request.GET.get("before"),
                                      request.GET.get("after"))
        except reads.BadCursor as exc:
            return HttpResponseBadRequest(str(exc))
        return self._render(request, crawl, "fetched.html", f"Fetched urls of {crawl.name}",
                            rows=page.rows, **self._pager(request, page))

    def refused_view(self, request: HttpRequest, crawl_id: int) -> HttpResponse:
        """The reasons with counts and examples; with ``?reason=``, that reason's urls."""
        crawl = self._crawl(request, crawl_id)
        reason = request.GET.get("reason")
        if not reason:
            return self._render(request, crawl, "refused.html",
                                f"Refused urls of {crawl.name}",
                                summary=reads.refused_summary(crawl.pk), reason=None)
        if reason not in REASONS:
            return HttpResponseBadRequest("unknown reason")
        try:
            page = reads.refused_page(crawl.pk, reason, request.GET.get("before"),
                                      request.GET.get("after"))
        except reads.BadCursor as exc:
            return HttpResponseBadRequest(str(exc))
        hosts, host_count = reads.refused_hosts(crawl.pk, reason, reads.PAGE_SIZE)
        return self._render(request, crawl, "refused.html",
                            f"Refused urls of {crawl.name}: {reason_label(reason)}",
                            reason=reason, reason_label=reason_label(reason), rows=page.rows,
                            hosts=hosts, host_count=host_count, **self._pager(request, page))

    def queued_view(self, request: HttpRequest, crawl_id: int) -> HttpResponse:
        crawl = self._crawl(request, crawl_id)
        return self._render(request, crawl, "queued.html", f"Queued urls of {crawl.name}",
                            queued=reads.queued_get(crawl.pk))

    def hosts_view(self, request: HttpRequest, crawl_id: int) -> HttpResponse:
        crawl = self._crawl(request, crawl_id)
        sort = request.GET.get("sort") or "origin"
        prefix = (request.GET.get("q") or "").strip()[:200]
        try:
            page = reads.hosts_page(crawl.pk, sort, request.GET.get("after"), prefix)
        except reads.BadCursor as exc:
            return HttpResponseBadRequest(str(exc))
        return self._render(
            request, crawl, "hosts.html", f"Hosts of {crawl.name}", rows=page.rows,
            sort=sort, sorts=reads.HOST_SORTS, prefix=prefix,
            next_url=page.older and self._link(request, after=page.older),
            host_url=reverse("admin:crawler_crawl_host", args=[crawl.pk]))

    def host_view(self, request: HttpRequest, crawl_id: int) -> HttpResponse:
        """One host; POST: the operator's actions (``action`` = slow, exclude or lift)."""
        crawl = self._crawl(request, crawl_id, change=request.method == "POST")
        source = request.POST if request.method == "POST" else request.GET
        try:
            origin = host_origin_check(source.get("origin", ""))
        except HostOverrideError as exc:
            return HttpResponseBadRequest(str(exc))
        if request.method == "POST":
            return self._host_action(request, crawl, origin)
        info = reads.host_get(crawl.pk, origin)
        if info is None:
            return HttpResponse(f"The crawl has no host {origin}.", status=404,
                                content_type="text/plain")
        return self._render(request, crawl, "host.html", f"{origin} in {crawl.name}",
                            can_change=self.admin.has_change_permission(request, crawl),
                            **info)

    def _host_action(self, request: HttpRequest, crawl: Crawl, origin: str) -> HttpResponse:
        action = request.POST.get("action")
        try:
            if action == "slow":
                try:
                    delay = float(request.POST.get("min_delay", ""))
                except ValueError:
                    raise HostOverrideError(
                        "the minimum delay must be a number of seconds") from None
                host_override_set(crawl.pk, origin, min_delay=delay)
                note = f"{origin}: at least {delay:g} s between requests from now on."
            elif action == "exclude":
                host_override_set(crawl.pk, origin, excluded=True)
                note = f"{origin} excluded: nothing more of it is fetched in this crawl."
            elif action == "lift":
                host_override_lift(crawl.pk, origin)
                note = f"{origin}: no override any more."
            else:
                return HttpResponseBadRequest("unknown action")
        except HostOverrideError as exc:
            return HttpResponseBadRequest(str(exc))
        self.admin.message_user(request, note + " Its queue server applies it within "
                                "seconds.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:crawler_crawl_host", args=[crawl.pk])
                                    + "?" + urlencode({"origin": origin}))


def host_urls(model_admin: ModelAdmin) -> list[URLPattern]:
    """The url and host pages' urls, for ``CrawlAdmin.get_urls``."""
    return HostPages(model_admin).urls()
