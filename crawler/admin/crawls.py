"""Admin for crawl management: crawls (with start/stop/resume/close), seeds, Page Options,
scrapers (``crawler.admin.scrapers``) and queue servers.

Actions and buttons only call ``crawler.services``; every refusal comes back as a message.
"""

from __future__ import annotations

from datetime import UTC

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
    JsonResponse,
)
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme

from classifiers.admin import ClassifierUseInline
from crawler import crawl_page, selectors, sending, services
from crawler.core.definition.crawl import ACTIVE_STATES, CrawlStatus, allowed_actions
from crawler.core.definition.seeds import bad_seed_lines
from crawler.core.queue_server.heartbeat import crawl_counters
from crawler.link_analysis import link_analysis_request
from crawler.machines.needy import WINDOW, needy_queries_get
from crawler.models import Crawl, PageOptions, QueueServer, SeedSite
from crawler.validators import line_errors
from crawler.warc_export import default_path, export_file, exports_list
from indexer.core.policies import CrawlPolicy
from linkgraph.models import LinkAnalysis
from linkgraph.selectors import link_analysis_status_get
from operations.admin_safety import SafeModelAdmin

from .hosts import host_urls
from .machines import machines_page
from .near_duplicates import near_duplicate_urls
from .page_testing import PageTestForm, run_test
from .scrapers import PageOptionsForm

CRAWL_ACTIONS = {
    "start": services.crawl_start,
    "stop": services.crawl_stop,
    "resume": services.crawl_resume,
    "close": services.crawl_close,
}

OPEN_WEB = "open-web"  # the confirmation an open-ended crawl's Start posts

COUNTERS = ("pages_fetched", "urls_seen", "urls_queued", "documents_indexed", "fetch_errors",
            "bytes_downloaded", "hosts_seen")


def _next_within_site(request: HttpRequest, fallback: str) -> str:
    """The POSTed ``next`` url when it stays on this site (same host, no scheme change),
    else ``fallback``: an action button never redirects off the site."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return fallback


class SeedSiteInline(admin.TabularInline):
    model = SeedSite
    extra = 0
    fields = ("url", "policy", "trust_weight")


SOURCE_FIELDS = ("source", "archive_path", "archive_of")
PRIORITY_FIELDS = ("favor_tier_bonus", "distrust_tier_penalty", "distrust_max_depth",
                   "policy_within_domain", "needy_threshold", "priority_importance_weight", "priority_need_weight")


class CrawlForm(forms.ModelForm):
    bulk_seeds = forms.CharField(
        label="Add seed sites", required=False,
        widget=forms.Textarea(attrs={"rows": 5, "cols": 80,
                                     "placeholder": "https://example.com/\nhttps://example.org/"}),
        help_text="One url per line; added with the policy and trust weight below. A bad line "
                  "is named and nothing is added.",
    )
    bulk_policy = forms.ChoiceField(
        label="Policy of the added seeds", choices=SeedSite._meta.get_field("policy").choices,
        initial=CrawlPolicy.DEFAULT.value,
    )
    bulk_trust_weight = forms.FloatField(
        label="Trust weight of the added seeds", initial=1.0, min_value=0.0, max_value=100.0
    )

    class Meta:
        model = Crawl
        fields = ("name", "description", "public", "order", "max_pages", "max_depth", "recrawl_days",
                  "max_domain_share", "sleep_window", "restrict_to_seeds", "allowed_sites",
                  "disallowed_sites", "page_options",
                  *PRIORITY_FIELDS, *SOURCE_FIELDS)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in (*PRIORITY_FIELDS, "source"):  # left empty: the default (older forms
            self.fields[name].required = False  # and scripts)

    def clean_source(self) -> str:
        return self.cleaned_data.get("source") or Crawl.Source.WEB

    def clean(self) -> dict:
        data = super().clean()
        if self.instance.pk and self.instance.status in ACTIVE_STATES and \
                "order" in self.changed_data:
            self.add_error("order", "A running crawl keeps the order it started with; stop "
                                    "it and start a new crawl for another order.")
        for name in PRIORITY_FIELDS:
            if data.get(name) is None and name not in self.errors:
                data[name] = Crawl._meta.get_field(name).get_default()
        return data

    def clean_bulk_seeds(self) -> str:
        text = self.cleaned_data.get("bulk_seeds", "")
        bad = bad_seed_lines(text)
        if bad:  # every bad line named at once
            raise line_errors([f"Bad seed url on {exc}" for exc in bad])
        return text


@admin.register(Crawl)
class CrawlAdmin(SafeModelAdmin):
    form = CrawlForm
    inlines = [SeedSiteInline]
    # short columns: the list fits a 1366-pixel screen beside the admin's menu and filters
    # (issue 39); the crawl order is a filter, the other counters (documents indexed count
    # link documents too) are on the crawl's status page
    list_display = ("name", "timestamp", "status_shown", "pages", "started", "public_shown",
                    "crawl_buttons")
    list_filter = ("status", "order", "public")
    search_fields = ("name", "description")
    readonly_fields = ("timestamp", "status", "started_at", "stopped_at", *COUNTERS)
    actions = ["start_crawls", "stop_crawls", "resume_crawls", "close_crawls",
               "new_crawl_from", "new_archive_crawl", "export_warc"]
    fieldsets = (
        (None, {"fields": ("name", "description", "page_options", "public")}),
        ("Source: fetch the web, or index pages already fetched again", {
            "fields": SOURCE_FIELDS}),
        ("Crawl parameters", {"fields": ("order", "max_pages", "max_depth", "recrawl_days",
                                         "max_domain_share", "sleep_window")}),
        ("Priorities: seed policies and needy queries", {"fields": PRIORITY_FIELDS}),
        ("Sites", {"fields": ("restrict_to_seeds", "allowed_sites", "disallowed_sites",
                              "bulk_seeds", "bulk_policy", "bulk_trust_weight")}),
        ("State", {"fields": ("timestamp", "status", "started_at", "stopped_at", *COUNTERS)}),
    )

    def get_changeform_initial_data(self, request: HttpRequest) -> dict:
        """A new crawl starts restricted to its seeds' sites with a page limit
        (``NEW_CRAWL_MAX_PAGES``): one seed and Start no longer follow links anywhere without
        end. Either can be changed in the form (or in the url's query)."""
        initial = super().get_changeform_initial_data(request)
        initial.setdefault("page_options", services.page_options_default_get().pk)
        initial.setdefault("restrict_to_seeds", True)
        initial.setdefault("max_pages", services.NEW_CRAWL_MAX_PAGES)
        return initial

    def save_related(self, request, form, formsets, change) -> None:
        """The seed rows and the pasted seeds; a new web crawl saved without any is told at
        once that Start will refuse it (it used to learn so only at Start)."""
        super().save_related(request, form, formsets, change)
        self._add_bulk_seeds(request, form)
        crawl = form.instance
        if change and crawl.status == CrawlStatus.RUNNING and (
                form.has_changed() or any(f.has_changed() for f in formsets)):
            self.message_user(request, f"{crawl.name} is running: its queue servers follow "
                              "the new seeds, sites, quotas and sleep window within a minute "
                              "(its order and Page Options stay as they started).",
                              messages.INFO)
        if crawl.source == Crawl.Source.WEB and crawl.status == CrawlStatus.NEW and \
                not crawl.seeds.exists():
            self.message_user(request, f"{crawl.name}: no seed sites yet, so Start would "
                              "refuse it: add one under Seed sites or Add seed sites.",
                              messages.WARNING)

    def _add_bulk_seeds(self, request, form) -> None:
        """Add the form's pasted seed urls (Add seed sites) to the saved crawl, saying how many."""
        text = form.cleaned_data.get("bulk_seeds", "")
        if text.strip():
            try:
                result = services.seed_sites_add_bulk(
                    form.instance.pk, text, form.cleaned_data["bulk_policy"],
                    form.cleaned_data["bulk_trust_weight"],
                )
            except services.CrawlServiceError as exc:
                self.message_user(request, str(exc), messages.ERROR)
                return
            note = f"Added {len(result.added)} seed site(s)."
            if result.already_present:
                note += f" {len(result.already_present)} already present."
            self.message_user(request, note, messages.SUCCESS)

    # --- per-crawl buttons ----------------------------------------------------------------

    def get_urls(self):
        own = [
            path("<int:crawl_id>/status/", self.admin_site.admin_view(self.status_view),
                 name="crawler_crawl_status"),
            path("<int:crawl_id>/do/<str:action>/", self.admin_site.admin_view(self.action_view),
                 name="crawler_crawl_action"),
            path("<int:crawl_id>/exports/<str:name>", self.admin_site.admin_view(self.export_view),
                 name="crawler_crawl_export"),
            path("<int:crawl_id>/raise-limit/", self.admin_site.admin_view(self.raise_limit_view),
                 name="crawler_crawl_raise_limit"),
            path("<int:crawl_id>/status.json", self.admin_site.admin_view(self.status_json),
                 name="crawler_crawl_status_json"),
            path("machines/", self.admin_site.admin_view(self.machines_view),
                 name="crawler_machines"),
            path("<int:crawl_id>/needy/", self.admin_site.admin_view(self.needy_view),
                 name="crawler_crawl_needy"),
            path("<int:crawl_id>/link-analysis/",
                 self.admin_site.admin_view(self.link_analysis_view),
                 name="crawler_crawl_link_analysis"),
        ]
        return own + host_urls(self) + near_duplicate_urls(self) + super().get_urls()

    @admin.display(description="Status", ordering="status")
    def status_shown(self, crawl: Crawl) -> str:
        """The status (an active crawl's with its channel: several run at once), and why
        the crawl is paused when a queue server is short of disk."""
        status = crawl.get_status_display()
        if crawl.channel is not None:
            status = f"{status} (channel {crawl.channel})"
        pauses = selectors.crawl_disk_pauses(crawl)
        if not pauses:
            return status
        return format_html('{}<br><span class="crawl-disk-paused">{}</span>', status,
                           "; ".join(pauses))

    @admin.display(description="pages", ordering="pages_fetched")
    def pages(self, crawl: Crawl) -> int:
        """Pages fetched."""
        return crawl.pages_fetched

    @admin.display(description="started", ordering="started_at")
    def started(self, crawl: Crawl) -> str:
        """The start time (UTC) in the crawl page's format, without seconds."""
        return crawl.started_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M") \
            if crawl.started_at else "–"

    @admin.display(description="public", boolean=True, ordering="public")
    def public_shown(self, crawl: Crawl) -> bool:
        """Open to anonymous search."""
        return crawl.public

    @admin.display(description="Actions")
    def crawl_buttons(self, crawl: Crawl) -> str:
        links = [format_html('<a href="{}">status</a>',
                             reverse("admin:crawler_crawl_status", args=[crawl.pk]))]
        return format_html(" · ".join(["{}"] * len(links)), *links)

    def action_view(self, request: HttpRequest, crawl_id: int, action: str):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        self._require(self.has_change_permission(request, crawl))
        service = CRAWL_ACTIONS.get(action)
        if action == "start" and services.crawl_open_ended(crawl) and \
                request.POST.get("confirm") != OPEN_WEB:
            return TemplateResponse(request, "admin/crawler/crawl/confirm_start.html", {
                **self.admin_site.each_context(request), "opts": self.model._meta,
                "title": f"Start crawl {crawl.name}?", "crawl": crawl, "confirm": OPEN_WEB,
                "next": request.POST.get("next", "")})
        if service is None:
            self.message_user(request, f"Unknown action {action!r}.", messages.ERROR)
        else:
            self._run(request, service, crawl, action)
        return HttpResponseRedirect(_next_within_site(
            request, reverse("admin:crawler_crawl_status", args=[crawl_id])))

    def export_view(self, request: HttpRequest, crawl_id: int, name: str):
        """Download a WARC export of the crawl (or its CDXJ index) from the exports folder
        (:func:`crawler.warc_export.export_file`); 404 for any other name."""
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        self._require(self.has_view_permission(request, crawl))
        found = export_file(crawl, name)
        if found is None:
            raise Http404("no such export of this crawl")
        return FileResponse(found.open("rb"), as_attachment=True, filename=found.name,
                            content_type="application/gzip" if name.endswith(".gz")
                            else "application/octet-stream")

    def raise_limit_view(self, request: HttpRequest, crawl_id: int):
        """The status page's "Raise the limit and resume" form (POST ``max_pages``): a crawl
        that ended at its page limit runs on with the new limit
        (:func:`crawler.services.crawl_raise_limit`); a bad number is a message, never a 5xx."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        self._require(self.has_change_permission(request, crawl))
        raw = request.POST.get("max_pages", "").strip()
        if not raw.isdigit() or len(raw) > 10 or int(raw) > 2 ** 31 - 1:
            self.message_user(request, f"{crawl.name}: the new page limit must be a whole "
                              f"number of pages, not {raw[:40]!r}.", messages.ERROR)
        else:
            try:
                services.crawl_raise_limit(crawl.pk, int(raw))
            except services.CrawlServiceError as exc:
                self.message_user(request, f"{crawl.name}: {exc}", messages.ERROR)
            else:
                self.message_user(request, f"{crawl.name}: page limit raised to "
                                  f"{int(raw) or 'none'}; the crawl runs on.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:crawler_crawl_status", args=[crawl_id]))

    def link_analysis_view(self, request: HttpRequest, crawl_id: int):
        """The "Run link analysis now" button (POST): queue a run, or a follow-up of the
        running one (``crawler.link_analysis``, :mod:`linkgraph.services`)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        self._require(self.has_change_permission(request, crawl))
        outcome = link_analysis_request(crawl.pk, "asked for in the admin")
        notes = {
            "queued": ("Link analysis queued; it runs on the analysis worker.", messages.SUCCESS),
            "coalesced": ("A link analysis is already queued; it will include every page "
                          "indexed so far.", messages.INFO),
            "follow-up": ("A link analysis is running; another run will follow it.",
                          messages.INFO),
        }
        text, level = notes.get(outcome, (None, messages.ERROR))
        if text is None:
            row = LinkAnalysis.objects.filter(crawl=crawl).first()
            text = f"Link analysis not queued: {row.last_error if row else outcome}"
        self.message_user(request, f"{crawl.name}: {text}", level)
        return HttpResponseRedirect(reverse("admin:crawler_crawl_status", args=[crawl_id]))

    @staticmethod
    def _require(allowed: bool) -> None:
        """403 for a staff user without the model permission a view needs."""
        if not allowed:
            raise PermissionDenied

    def status_view(self, request: HttpRequest, crawl_id: int):
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        self._require(self.has_view_permission(request, crawl))
        can_change = self.has_change_permission(request, crawl)
        live = selectors.crawl_status_get(crawl)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Crawl {crawl.name}",
            "crawl": crawl,
            "counters": [{**row, "value": getattr(crawl, row["name"])}
                         for row in crawl_page.counters_legend()],
            "seeds": crawl.seeds.all()[:200],
            "seed_count": crawl.seeds.count(),
            "actions": crawl_page.page_actions(crawl.status, can_change),
            "can_change": can_change,  # the buttons are shown only to who may use them
            "page_options": crawl.page_options_snapshot,
            "page_options_rows": crawl_page.page_options_rows(crawl.page_options_snapshot),
            "queue_servers": QueueServer.objects.all(),
            "live": live,
            "link_analysis": link_analysis_status_get(crawl.pk),
            "now": timezone.now(),
            "exports": exports_list(crawl),
            "page_limit_reached": (can_change and crawl.status == CrawlStatus.STOPPED
                                   and crawl.end_reason.startswith(services.PAGE_LIMIT_REACHED)),
        }
        return TemplateResponse(request, "admin/crawler/crawl/status.html", context)

    def needy_view(self, request: HttpRequest, crawl_id: int):
        """The needy queries of the query log and what each live queue server is crawling
        first because of them (its needy lane's best urls and the queries they match)."""
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        self._require(self.has_view_permission(request, crawl))
        servers = [(q.server_id, c) for q in selectors.live_queue_servers()
                   if (c := crawl_counters(q.counters, crawl.pk)) is not None]
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta,
            "title": f"Needy queries of {crawl.name}", "crawl": crawl,
            "needy": needy_queries_get(crawl.needy_threshold), "window_days": WINDOW.days,
            "servers": [{"server": n, "queued": c.get("needy_queued", 0),
                         "queries": c.get("needy_queries", 0), "top": c.get("needy_top", [])}
                        for n, c in sorted(servers)],
        }
        return TemplateResponse(request, "admin/crawler/crawl/needy.html", context)

    def machines_view(self, request: HttpRequest):
        """Queue servers and fetcher processes, with their heartbeats (also the menu's
        Machines, ``crawler.admin.machines``)."""
        self._require(self.has_view_permission(request))
        return machines_page(self.admin_site, request)

    def status_json(self, request: HttpRequest, crawl_id: int) -> JsonResponse:
        """Live counters for the status page's refresh (and for scripts), with the buttons
        the crawl's state allows this user (``actions``)."""
        crawl = get_object_or_404(Crawl, pk=crawl_id)
        self._require(self.has_view_permission(request, crawl))
        actions = crawl_page.page_actions(crawl.status,
                                          self.has_change_permission(request, crawl))
        return JsonResponse({**selectors.crawl_status_get(crawl), "actions": actions,
                             "link_analysis": link_analysis_status_get(crawl.pk)})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = extra_context or {}
        # a non-numeric id (a mistyped url) is the admin's own "does not exist", not a 500
        crawl = Crawl.objects.filter(pk=object_id).first() if str(object_id).isdigit() \
            else None
        if crawl is not None and self.has_change_permission(request, crawl):
            extra_context["crawl_actions"] = [a for a in allowed_actions(crawl.status)
                                              if a in CRAWL_ACTIONS]
        return super().change_view(request, object_id, form_url, extra_context)

    # --- list actions ---------------------------------------------------------------------

    def _run(self, request, service, crawl: Crawl, verb: str) -> None:
        try:
            service(crawl.pk)
        except services.CrawlServiceError as exc:
            self.message_user(request, f"{crawl.name}: {exc}", messages.ERROR)
        else:
            crawl.refresh_from_db()
            self.message_user(request, f"{crawl.name}: {verb} done; now {crawl.status}.",
                              messages.SUCCESS)

    def _run_all(self, request, queryset, verb):
        for crawl in queryset:
            self._run(request, CRAWL_ACTIONS[verb], crawl, verb)

    @admin.action(description="Start selected crawls")
    def start_crawls(self, request, queryset):
        """Start them, but an open-ended one (no site restriction, no page limit): its Start
        on its status page asks to confirm."""
        for crawl in queryset:
            if services.crawl_open_ended(crawl) and crawl.status == CrawlStatus.NEW:
                self.message_user(request, f"{crawl.name}: not started: it is neither "
                                  "restricted to its seeds' sites nor limited in pages. Set "
                                  "one, or press Start on its status page to confirm.",
                                  messages.WARNING)
            else:
                self._run(request, CRAWL_ACTIONS["start"], crawl, "start")

    @admin.action(description="Stop selected crawls")
    def stop_crawls(self, request, queryset):
        self._run_all(request, queryset, "stop")

    @admin.action(description="Resume selected crawls")
    def resume_crawls(self, request, queryset):
        self._run_all(request, queryset, "resume")

    @admin.action(description="Close selected crawls")
    def close_crawls(self, request, queryset):
        self._run_all(request, queryset, "close")

    @admin.action(description="New crawl from the selected crawl (same seeds and options)",
                  permissions=["add"])
    def new_crawl_from(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one crawl to copy.", messages.ERROR)
            return None
        copy = services.crawl_copy(queryset.first().pk)
        self.message_user(request, f"{copy.name} was created from {queryset.first().name}: "
                          "check it and start it.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:crawler_crawl_change", args=[copy.pk]))

    @admin.action(description="New archive crawl of the selected crawl (its stored pages "
                              "indexed again, with the Page Options as they are now)",
                  permissions=["add"])
    def new_archive_crawl(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one crawl to index again.",
                              messages.ERROR)
            return None
        archive = services.crawl_archive_new(queryset.first().pk)
        self.message_user(request, f"{archive.name} was created: check its Page Options and "
                          "start it.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:crawler_crawl_change", args=[archive.pk]))

    @admin.action(description="Export the selected crawls to WARC files (in the background)",
                  permissions=["change"])
    def export_warc(self, request, queryset):
        for crawl in queryset:
            try:
                sending.send_export_warc(crawl.pk)
            except Exception as exc:  # the broker: the admin says so, the action does not 500
                self.message_user(request, f"{crawl.name}: the export could not be queued "
                                  f"({type(exc).__name__}: {exc})", messages.ERROR)
                continue
            self.message_user(request, f"{crawl.name}: WARC export queued; it will be "
                              f"written to {default_path(crawl)} (with its .cdxj index) by "
                              "the analysis worker, and listed on the crawl's status page.",
                              messages.SUCCESS)


@admin.register(SeedSite)
class SeedSiteAdmin(SafeModelAdmin):
    list_display = ("url", "crawl", "policy", "trust_weight", "added_at")
    list_filter = ("policy", "crawl")
    search_fields = ("url",)


@admin.register(PageOptions)
class PageOptionsAdmin(SafeModelAdmin):
    list_display = ("name", "is_default", "summarizer", "byte_range", "max_links_to_extract",
                    "min_results_to_group")
    form = PageOptionsForm
    filter_horizontal = ("scrapers",)
    inlines = [ClassifierUseInline]
    actions = ["duplicate_options"]
    fieldsets = (
        (None, {"fields": ("name", "description", "is_default")}),
        ("Crawl time", {"fields": ("byte_range", "index_whole_page", "max_description_len",
                                   "summarizer",
                                   "max_links_to_extract", "cache_pages", "page_recrawl_days",
                                   "file_types", "robots", "page_rules", "scrapers",
                                   "builtin_scrapers_used")}),
        ("Search time: grouping and budget", {"fields": (
            "min_results_to_group", "server_alpha", "results_per_page",
            "intersect_time_budget")}),
        ("Search time: ranking", {"fields": (
            "doc_rank_weight", "link_score_weight", "relevance_weight", "proximity_weight",
            "title_weight", "description_weight", "link_weight", "host_keyword_bonus",
            "title_bonus", "path_bonus", "cld_url_bonus", "host_url_bonus", "wiki_bonus",
            "num_slashes_bonus", "proximity_bonus", "common_phrase_bonus")}),
        ("Search time: snippets and page elements", {"fields": (
            "description_length", "min_description_length", "snippet_left", "snippet_right",
            "show_word_suggest", "show_cache_link", "show_similar_link", "show_inlinks_link",
            "show_result_score")}),
    )

    def get_urls(self):
        own = [path("<int:options_id>/test/", self.admin_site.admin_view(self.test_view),
                    name="crawler_pageoptions_test")]
        return own + super().get_urls()

    def test_view(self, request: HttpRequest, options_id: int):
        """Page Options "Test": one page through every processing step, with timings."""
        options = get_object_or_404(PageOptions, pk=options_id)
        if not self.has_change_permission(request, options):
            raise PermissionDenied  # the test fetches urls: change_pageoptions only
        report, message = None, ""
        if request.method == "POST":
            form = PageTestForm(request.POST, request.FILES)
            if form.is_valid():
                report, message = run_test(options, form)
        else:
            form = PageTestForm()
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta,
            "title": f"Test page options: {options.name}", "options": options, "form": form,
            "report": report, "message": message,
        }
        return TemplateResponse(request, "admin/crawler/pageoptions/test.html", context)

    @admin.action(description="Duplicate the selected Page Options", permissions=["add"])
    def duplicate_options(self, request, queryset):
        for options in queryset:
            copy = services.page_options_copy(options.pk)
            self.message_user(request, f"{copy.name} was created from {options.name}.",
                              messages.SUCCESS)

    def save_model(self, request, obj, form, change) -> None:
        if obj.is_default:
            PageOptions.objects.exclude(pk=obj.pk).filter(is_default=True).update(
                is_default=False)
        super().save_model(request, obj, form, change)


@admin.register(QueueServer)
class QueueServerAdmin(SafeModelAdmin):
    """Queue-server rows, read only: each queue server writes its own with its heartbeats
    (``crawler.services.queue_server_heartbeat``). A staff user who could change a row's url
    would send searches, and the shard token, wherever they chose. A row may be deleted (a
    queue server gone for good); a live one writes it again at its next heartbeat."""

    list_display = ("server_id", "base_url", "state", "last_heartbeat", "seconds_since_heartbeat")
    readonly_fields = ("server_id", "base_url", "state", "last_heartbeat", "counters")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description="Seconds since heartbeat")
    def seconds_since_heartbeat(self, obj: QueueServer):
        if obj.last_heartbeat is None:
            return "never"
        return int((timezone.now() - obj.last_heartbeat).total_seconds())
