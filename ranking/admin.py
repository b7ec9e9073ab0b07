"""Admin for curated results (``ranking.models``): pin a url to a query's first results, hide a
url from every result. The search page follows a change within ``SEARCH_OPTIONS_TTL`` seconds
(at once in the process that saved it)."""

from __future__ import annotations

from django.contrib import admin

from operations.admin_safety import SafeModelAdmin

from .models import HiddenUrl, PinnedResult


@admin.register(PinnedResult)
class PinnedResultAdmin(SafeModelAdmin):
    list_display = ("query", "position", "url", "note")
    list_display_links = ("query", "url")
    search_fields = ("query", "url", "note")
    fields = ("query", "url", "position", "note")


@admin.register(HiddenUrl)
class HiddenUrlAdmin(SafeModelAdmin):
    list_display = ("url", "reason", "hidden_at")
    search_fields = ("url", "reason")
    fields = ("url", "reason")
