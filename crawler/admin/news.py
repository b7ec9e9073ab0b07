"""The news sources in the admin (Yioop's Media Sources): add, edit and switch off RSS and
Atom feeds, see when each was read and why it failed, and their items.

Layer: Django glue (admin). Validation is the model's (``crawler.models.news``: an http or
https url, a unique name and url, a language tag, 5 minutes to a week between updates): bad
input is a form error, never a server error. A source whose url changed, and one asked to
with the "Read at the next run" action, is read at the scheduler's next run
(``crawler.news.updates``; ``NEWS_TICK_SECONDS``).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from crawler.models import NewsItem, NewsSource
from operations.admin_safety import SafeModelAdmin


class NewsSourceForm(forms.ModelForm):
    class Meta:
        model = NewsSource
        fields = ("name", "url", "language", "update_minutes", "enabled")

    def save(self, commit: bool = True) -> NewsSource:
        row = super().save(commit=False)
        if "url" in self.changed_data or "enabled" in self.changed_data:
            row.next_update_at = None  # read at the next run
        if commit:
            row.save()
        return row


@admin.register(NewsSource)
class NewsSourceAdmin(SafeModelAdmin):
    form = NewsSourceForm
    list_display = ("name", "state", "enabled", "update_minutes", "last_update_at",
                    "items_count", "language", "url")
    list_filter = ("enabled",)
    search_fields = ("name", "url")
    readonly_fields = ("last_update_at", "next_update_at", "state", "last_new_items")
    actions = ("read_next_run",)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).annotate(items_total=Count("items"))

    @admin.display(description="State")
    def state(self, obj: NewsSource) -> str:
        if obj.last_update_at is None:
            return "not read yet"
        if obj.last_error:
            return format_html("<strong>error: {}</strong>", obj.last_error)
        return f"ok, {obj.last_new_items} new items"

    @admin.display(description="Items", ordering="items_total")
    def items_count(self, obj: NewsSource) -> int:
        return getattr(obj, "items_total", None) or obj.items.count()

    @admin.action(description="Read at the next run")
    def read_next_run(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.update(next_update_at=None)
        self.message_user(request, f"{count} sources will be read at the next run.",
                          messages.SUCCESS)


@admin.register(NewsItem)
class NewsItemAdmin(SafeModelAdmin):
    """The items indexed, read only (they are in the news index already)."""

    list_display = ("title", "source", "published_at", "indexed_at")
    list_filter = ("source",)
    search_fields = ("title", "url")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
