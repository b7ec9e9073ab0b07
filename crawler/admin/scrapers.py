"""Admin of scrapers: the admin's own (rows) and the built-in ones (code), and the Page Options
field that chooses which built-in scrapers a profile uses.

Layer: Django glue. The Scrapers page lists the admin's scrapers and, above them, the built-in
ones (``crawler.core.processing.builtin_scrapers``) with their signature, paths, fields and meta words, the
profiles that turn each off and those where an admin scraper replaces it. "Copy to my scrapers"
makes an admin scraper with the built-in one's name and fields (``services.
scraper_from_builtin``): chosen in a profile, it replaces the built-in one there and can be
edited. A profile turns built-in scrapers off with the checkboxes of
:class:`PageOptionsForm`.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse

from crawler import selectors, services
from crawler.core.processing.builtin_scrapers import BUILTIN_NAMES
from crawler.models import PageOptions, Scraper
from operations.admin_safety import SafeModelAdmin


class PageOptionsForm(forms.ModelForm):
    """Page Options with the built-in scrapers as checkboxes (checked: used), stored as the
    list of those turned off, so that a built-in scraper added later is used by default."""

    builtin_scrapers_used = forms.MultipleChoiceField(
        label="Built-in scrapers used", required=False,
        choices=[(name, name) for name in BUILTIN_NAMES],
        widget=forms.CheckboxSelectMultiple,
        help_text="Unchecked ones are not used by crawls with this profile. A scraper of the "
                  "profile named like one, or with its signature, replaces it.")

    class Meta:
        model = PageOptions
        exclude = ("disabled_builtin_scrapers",)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        off = {name.casefold() for name in (self.instance.disabled_builtin_scrapers or [])}
        self.initial.setdefault("builtin_scrapers_used", [
            name for name in BUILTIN_NAMES if name.casefold() not in off])

    def clean(self) -> dict:
        data = super().clean()
        used = set(data.get("builtin_scrapers_used") or [])
        self.instance.disabled_builtin_scrapers = [n for n in BUILTIN_NAMES if n not in used]
        return data


class ScraperAdmin(SafeModelAdmin):
    list_display = ("name", "priority", "signature")
    search_fields = ("name", "signature")
    change_list_template = "admin/crawler/scraper/change_list.html"

    def get_urls(self):
        own = [path("builtin/copy/", self.admin_site.admin_view(self.copy_builtin_view),
                    name="crawler_scraper_copy_builtin")]
        return own + super().get_urls()

    def changelist_view(self, request, extra_context=None):
        extra = {"builtin_scrapers": selectors.builtin_scrapers_list(),
                 "may_copy_builtin": self.has_add_permission(request)}
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def copy_builtin_view(self, request: HttpRequest):
        """POST ``name``: a new admin scraper copied from the built-in one."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_add_permission(request):
            raise PermissionDenied
        try:
            scraper = services.scraper_from_builtin(request.POST.get("name", ""))
        except services.CrawlServiceError as exc:
            self.message_user(request, f"Not copied: {exc}.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:crawler_scraper_changelist"))
        self.message_user(request, f"{scraper.name} was copied from the built-in scraper: "
                          "choose it in a profile's scrapers to replace the built-in one there.",
                          messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:crawler_scraper_change", args=[scraper.pk]))


admin.site.register(Scraper, ScraperAdmin)
