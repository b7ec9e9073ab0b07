"""Admin for which index the search page answers from: the search index choice and crawl mixes.

The choice is one row (``SearchIndex``, pk 1): its list page opens the row's form, which offers
a crawl, a crawl mix or "always the newest finished crawl". Crawls and mixes also carry a
"Use for search" action, and the crawl list a "searched" column: the crawler's ``CrawlAdmin``
is registered again here as :class:`SearchedCrawlAdmin`, its subclass with those two (the crawler
app does not know the search-index choice). Every write goes through
``searchindex.services.search_index_use``; refusals come back as messages. Needs the "change
search index" permission.
"""

from __future__ import annotations

import threading

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse

from crawler.admin.crawls import CrawlAdmin
from crawler.models import Crawl
from operations.admin_safety import SafeModelAdmin

from . import selectors, services
from .models import CrawlMix, CrawlMixMember, SearchIndex

USE_PERMISSION = "searchindex.change_searchindex"


def may_choose_index(request: HttpRequest) -> bool:
    return request.user.has_perm(USE_PERMISSION)


def use_for_search(admin_view: admin.ModelAdmin, request: HttpRequest, mode: str,
                   queryset) -> None:
    """The "Use for search" action of crawls (``mode`` "crawl") and mixes ("mix"): exactly
    one row must be selected."""
    if queryset.count() != 1:
        admin_view.message_user(request, "Select exactly one to use for search.",
                                messages.ERROR)
        return
    chosen = queryset.first()
    try:
        row = services.search_index_use(mode, **{f"{mode}_id": chosen.pk})
    except services.SearchIndexError as exc:
        admin_view.message_user(request, f"{chosen}: {exc}", messages.ERROR)
        return
    admin_view.message_user(request, f"The search page now answers from {row}.",
                            messages.SUCCESS)


class CrawlMixMemberInline(admin.TabularInline):
    model = CrawlMixMember
    extra = 2


@admin.register(CrawlMix)
class CrawlMixAdmin(SafeModelAdmin):
    list_display = ("name", "description", "crawls", "public", "in_use")
    search_fields = ("name", "description")
    inlines = [CrawlMixMemberInline]
    actions = ["use_mix_for_search"]

    @admin.display(description="crawls (weight)")
    def crawls(self, mix: CrawlMix) -> str:
        return ", ".join(str(m) for m in mix.members.select_related("crawl"))

    @admin.display(description="searched", boolean=True)
    def in_use(self, mix: CrawlMix) -> bool:
        return SearchIndex.objects.filter(pk=1, mode=SearchIndex.Mode.MIX, mix=mix).exists()

    def has_use_for_search_permission(self, request: HttpRequest) -> bool:
        return may_choose_index(request)

    @admin.action(description="Use the selected mix for search", permissions=["use_for_search"])
    def use_mix_for_search(self, request, queryset):
        use_for_search(self, request, "mix", queryset)


class SearchIndexForm(forms.ModelForm):
    class Meta:
        model = SearchIndex
        fields = ("mode", "crawl", "mix")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["crawl"].queryset = Crawl.objects.exclude(status="new")
        self.fields["crawl"].help_text = "Searched when the mode is 'This crawl'."
        self.fields["mix"].help_text = "Searched when the mode is 'This crawl mix'."

    def clean(self) -> dict:
        data = super().clean()
        mode = data.get("mode")
        if mode == SearchIndex.Mode.CRAWL and not data.get("crawl"):
            self.add_error("crawl", "Choose the crawl to search.")
        if mode == SearchIndex.Mode.MIX:
            mix = data.get("mix")
            if not mix:
                self.add_error("mix", "Choose the crawl mix to search.")
            elif not mix.members.exists():
                self.add_error("mix", f"Crawl mix {mix.name!r} has no crawls: add one first.")
        return data


@admin.register(SearchIndex)
class SearchIndexAdmin(SafeModelAdmin):
    """One row: the list page goes straight to its form."""

    form = SearchIndexForm
    readonly_fields = ("now_searched", "when_a_crawl_ends", "changed_at")
    fields = ("now_searched", "when_a_crawl_ends", "mode", "crawl", "mix", "changed_at")

    @admin.display(description="now searched")
    def now_searched(self, row: SearchIndex) -> str:
        return selectors.search_index_get().label

    @admin.display(description="when a crawl ends")
    def when_a_crawl_ends(self, row: SearchIndex | None) -> str:
        return when_a_crawl_ends()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return super().has_add_permission(request) and not SearchIndex.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_changeform_initial_data(self, request: HttpRequest) -> dict:
        """A first choice starts from what the search page answers from now: the newest
        crawl that has started."""
        newest = Crawl.objects.exclude(status="new").order_by("-timestamp").first()
        return {"mode": SearchIndex.Mode.CRAWL, "crawl": newest} if newest else \
            {"mode": SearchIndex.Mode.NEWEST}

    def changelist_view(self, request: HttpRequest, extra_context=None):
        """The row's form (the form to make it when there is none yet); opening it changes
        nothing."""
        if not self.has_view_or_change_permission(request):
            return super().changelist_view(request, extra_context)  # answers 403
        if SearchIndex.objects.filter(pk=1).exists():
            return HttpResponseRedirect(reverse("admin:searchindex_searchindex_change", args=[1]))
        return HttpResponseRedirect(reverse("admin:searchindex_searchindex_add"))

    def save_model(self, request, obj: SearchIndex, form, change) -> None:
        try:
            row = services.search_index_use(obj.mode, crawl_id=obj.crawl_id, mix_id=obj.mix_id)
        except services.SearchIndexError as exc:  # the form checked it; a race lands here
            self.message_user(request, str(exc), messages.ERROR)
        else:
            obj.pk = row.pk


def when_a_crawl_ends() -> str:
    """What happens to search when a crawl ends, as the admin pages say it: followed (the
    newest finished crawl is searched) or not (an admin pinned a crawl or a mix)."""
    if selectors.search_index_pinned():
        return (f"Pinned: search reads {selectors.search_index_get().label}, chosen by an "
                "admin; a crawl that ends is not searched by itself. Choose \"Always the "
                "newest finished crawl\" to search each crawl as it ends.")
    if selectors.search_index_follows_every_crawl():
        return ("Automatic: search reads every finished crawl; a crawl that ends with pages "
                "is searched with the others.")
    return ("Automatic: each crawl that ends with pages becomes the searched index. Choose "
            "\"This crawl\" or \"This crawl mix\" to pin one.")


def crawl_search_note(crawl: Crawl) -> str:
    """Whether search reads ``crawl``, or will when it ends, or why not, for its status page."""
    choice = selectors.search_index_get()
    if crawl.timestamp in choice.timestamps:
        return f"Search reads this crawl ({choice.label})."
    if selectors.search_index_pinned():
        return (f"Search reads {choice.label}, pinned by an admin: this crawl is not searched "
                "when it ends. Use \"Use the selected crawl for search\" on the crawl list, or "
                "the Search index page, to search it.")
    if selectors.search_index_follows_every_crawl():
        return "This crawl is searched with every other finished crawl when it ends with pages."
    return "This crawl becomes the searched index when it ends with pages."


def _with(names: tuple[str, ...] | list[str], name: str, before: str) -> list[str]:
    """``names`` with ``name`` put just before ``before``."""
    names = list(names)
    names.insert(names.index(before), name)
    return names


class SearchedCrawlAdmin(CrawlAdmin):
    """The crawl admin, with which crawl search answers from: a "searched" column and the
    "Use for search" action."""

    list_display = tuple(_with(CrawlAdmin.list_display, "searched", before="crawl_buttons"))
    actions = _with(CrawlAdmin.actions, "use_crawl_for_search", before="new_crawl_from")
    _searched = threading.local()  # per request thread: see changelist_view

    def has_use_for_search_permission(self, request: HttpRequest) -> bool:
        return may_choose_index(request)

    @admin.action(description="Use the selected crawl for search",
                  permissions=["use_for_search"])
    def use_crawl_for_search(self, request, queryset):
        use_for_search(self, request, "crawl", queryset)

    @admin.display(description="searched", boolean=True)
    def searched(self, crawl: Crawl) -> bool:
        return crawl.timestamp in self._searched.timestamps

    def changelist_view(self, request, extra_context=None):
        # the "searched" column's choice, read once per list rather than once per row
        self._searched.timestamps = selectors.search_index_get().timestamps
        if request.method == "GET":  # which index search reads, and whether a crawl ending
            self.message_user(request, when_a_crawl_ends(), messages.INFO)  # changes it
        return super().changelist_view(request, extra_context)

    def status_view(self, request: HttpRequest, crawl_id: int):
        """The crawl's status page, saying whether search reads the crawl or will."""
        crawl = Crawl.objects.filter(pk=crawl_id).first()
        if crawl is not None and self.has_view_permission(request, crawl):
            self.message_user(request, crawl_search_note(crawl), messages.INFO)
        return super().status_view(request, crawl_id)


admin.site.unregister(Crawl)
admin.site.register(Crawl, SearchedCrawlAdmin)
