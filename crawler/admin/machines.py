"""The Machines page in the admin: queue servers and fetcher processes, live.

Layer: Django glue (admin). ``Machine`` is a proxy model whose list is this page, so the page
has its place in the admin's menu (under Crawler); the crawl admin's ``machines/`` url shows the
same page. ``machines.json`` gives the rows for the page's script
(``static/crawler/machines.js``), which refreshes them every few seconds. Rows come from
``crawler.selectors.machines_list``: one per queue server and one per fetcher process, whose
heartbeat thread (``crawler.machines.presence``) reports even while it is idle.

Below the rows, the fetcher pool of this machine (the ``fetchers`` child of ``manage.py up``):
its last :data:`LOG_LINES` lines of output (``VAR_DIRECTORY/logs/fetchers.log``, written by
up's supervisor: ``operations.child_logs``; in ``machines.json`` too, so the page keeps them
fresh) and a Restart button: a POST (CSRF-protected, for who may change crawls) that asks the
supervisor for a restart (``operations.child_control``), which it does within a second: the
worker and its pool processes stop (a schedule being fetched is given back to the broker, as
on any stop) and start again. Other machines' pools are restarted on their own admin.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from crawler import selectors
from crawler.models import Machine
from operations.admin_safety import SafeModelAdmin
from operations.child_control import CONTROL_DIR, RESTARTABLE, request_restart, restart_pending
from operations.child_logs import LOG_DIR, last_lines

LOG_LINES = 60
POOL = "fetchers"  # manage.py up's child that runs this machine's fetcher processes


def may_see_machines(request: HttpRequest) -> bool:
    """Who may see crawls may see the machines that run them."""
    user = request.user
    return bool(user.is_active and user.is_staff
                and (user.has_perm("crawler.view_crawl") or user.has_perm("crawler.change_crawl")
                     or user.has_perm("crawler.view_fetcher")))


def may_restart(request: HttpRequest) -> bool:
    """Who may change crawls may restart the fetchers that run them."""
    user = request.user
    return bool(user.is_active and user.is_staff and user.has_perm("crawler.change_crawl"))


def pool_log() -> list[str]:
    """The fetcher pool's last lines of output on this machine (oldest first)."""
    try:
        return last_lines(settings.VAR_DIRECTORY / LOG_DIR, POOL, LOG_LINES)
    except OSError:  # an unreadable log (permissions, a disk error) shows as none
        return []


def machines_page(admin_site: admin.AdminSite, request: HttpRequest) -> TemplateResponse:
    """The Machines page (403 for a staff user who may not see crawls)."""
    if not may_see_machines(request):
        raise PermissionDenied
    context = {**admin_site.each_context(request), "opts": Machine._meta,
               "title": "Machines", "machines": selectors.machines_list(),
               "heartbeat_seconds": settings.FETCHER_HEARTBEAT_SECONDS,
               "gone_after": selectors.GONE_AFTER_BEATS * settings.FETCHER_HEARTBEAT_SECONDS,
               "pool_log": pool_log(), "may_restart": may_restart(request),
               "restart_pending": restart_pending(settings.VAR_DIRECTORY / CONTROL_DIR, POOL),
               "log_lines": LOG_LINES}
    return TemplateResponse(request, "admin/crawler/machines.html", context)


def machines_json(request: HttpRequest) -> JsonResponse:
    if not may_see_machines(request):
        raise PermissionDenied
    return JsonResponse({"machines": [row.as_json() for row in selectors.machines_list()],
                         "pool_log": pool_log(),
                         "restart_pending": restart_pending(
                             settings.VAR_DIRECTORY / CONTROL_DIR, POOL)})


@require_POST
def restart_pool(request: HttpRequest, name: str) -> HttpResponseRedirect:
    """Ask this machine's supervisor to restart pool ``name`` (only the fetcher pool)."""
    if not may_restart(request):
        raise PermissionDenied
    if name not in RESTARTABLE:
        raise Http404("no such pool")
    request_restart(settings.VAR_DIRECTORY / CONTROL_DIR, name)
    messages.success(request, "Restart of the fetcher pool asked: manage.py up restarts it "
                              "within a second (a schedule being fetched goes back to the "
                              "queue and is fetched again).")
    return HttpResponseRedirect(reverse("admin:crawler_machine_changelist"))


@admin.register(Machine)
class MachineAdmin(SafeModelAdmin):
    """The menu's "Machines": its list is the Machines page; nothing is added or edited."""

    def get_urls(self):
        return [path("machines.json", self.admin_site.admin_view(machines_json),
                     name="crawler_machines_json"),
                path("pools/<str:name>/restart/", self.admin_site.admin_view(restart_pool),
                     name="crawler_machines_restart")] + super().get_urls()

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
