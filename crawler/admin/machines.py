"""The Machines page in the admin: queue servers and fetcher processes, live.

Layer: Django glue (admin). ``Machine`` is a proxy model whose list is this page, so the page
has its place in the admin's menu (under Crawler); the crawl admin's ``machines/`` url shows the
same page. ``machines.json`` gives the rows for the page's script
(``static/crawler/machines.js``), which refreshes them every few seconds. Rows come from
``crawler.selectors.machines_list``: one per queue server and one per fetcher process, whose
heartbeat thread (``crawler.machines.presence``) reports even while it is idle.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path

from crawler import selectors
from crawler.models import Machine
from operations.admin_safety import SafeModelAdmin


def may_see_machines(request: HttpRequest) -> bool:
    """Who may see crawls may see the machines that run them."""
    user = request.user
    return bool(user.is_active and user.is_staff
                and (user.has_perm("crawler.view_crawl") or user.has_perm("crawler.change_crawl")
                     or user.has_perm("crawler.view_fetcher")))


def machines_page(admin_site: admin.AdminSite, request: HttpRequest) -> TemplateResponse:
    """The Machines page (403 for a staff user who may not see crawls)."""
    if not may_see_machines(request):
        raise PermissionDenied
    context = {**admin_site.each_context(request), "opts": Machine._meta,
               "title": "Machines", "machines": selectors.machines_list(),
               "heartbeat_seconds": settings.FETCHER_HEARTBEAT_SECONDS,
               "gone_after": selectors.GONE_AFTER_BEATS * settings.FETCHER_HEARTBEAT_SECONDS}
    return TemplateResponse(request, "admin/crawler/machines.html", context)


def machines_json(request: HttpRequest) -> JsonResponse:
    if not may_see_machines(request):
        raise PermissionDenied
    return JsonResponse({"machines": [row.as_json() for row in selectors.machines_list()]})


@admin.register(Machine)
class MachineAdmin(SafeModelAdmin):
    """The menu's "Machines": its list is the Machines page; nothing is added or edited."""

    def get_urls(self):
        return [path("machines.json", self.admin_site.admin_view(machines_json),
                     name="crawler_machines_json")] + super().get_urls()

    def changelist_view(self, request, extra_context=None):
        return machines_page(self.admin_site, request)

    def has_module_permission(self, request) -> bool:
        return may_see_machines(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return may_see_machines(request)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
