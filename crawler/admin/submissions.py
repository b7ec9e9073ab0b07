"""The admin's list of url submissions ("Is my site indexed?", issue 38): the operator
approves them into the running crawl (as seeds) or declines them; the work is
:mod:`crawler.submissions`'s."""

from __future__ import annotations

from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from crawler.models import UrlSubmission
from crawler.submissions import SubmissionError, submissions_approve, submissions_decline


@admin.register(UrlSubmission)
class UrlSubmissionAdmin(admin.ModelAdmin):
    list_display = ("url", "status", "reason", "crawl", "submitted_at", "decided_at")
    list_filter = ("status",)
    search_fields = ("url",)
    readonly_fields = ("url", "origin", "client", "submitted_at", "status", "reason", "crawl",
                       "decided_at")
    actions = ("approve", "decline")

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description=_("Approve: add to the running crawl as seeds"),
                  permissions=["change"])
    def approve(self, request, queryset) -> None:
        try:
            done = submissions_approve(queryset.values_list("pk", flat=True))
        except SubmissionError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(request, ngettext("%(n)d url added to the running crawl.",
                                            "%(n)d urls added to the running crawl.", done)
                          % {"n": done}, messages.SUCCESS)

    @admin.action(description=_("Decline"), permissions=["change"])
    def decline(self, request, queryset) -> None:
        done = submissions_decline(queryset.values_list("pk", flat=True))
        self.message_user(request, ngettext("%(n)d url declined.", "%(n)d urls declined.", done)
                          % {"n": done}, messages.SUCCESS)
