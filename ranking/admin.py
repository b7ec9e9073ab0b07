"""Admin for curated results (``ranking.models``): pin a url to a query's first results, hide a
url or a whole host from every result, edit a result's title and snippet; and the site's appearance (name, logo, colours, footer links: one row).
The search page follows a change within ``SEARCH_OPTIONS_TTL`` seconds (at once in the process
that saved it)."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from operations.admin_safety import SafeModelAdmin

from .models import Appearance, EditedResult, HiddenHost, HiddenUrl, PinnedResult
from .searchpage.appearance import MAX_LOGO_BYTES, contrast, footer_links, logo_type

HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
MIN_CONTRAST = 4.5  # WCAG 2 AA for body text


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


@admin.register(HiddenHost)
class HiddenHostAdmin(SafeModelAdmin):
    """The host filter: every page of a host left out of results."""

    list_display = ("host", "reason", "hidden_at")
    search_fields = ("host", "reason")
    fields = ("host", "reason")


@admin.register(EditedResult)
class EditedResultAdmin(SafeModelAdmin):
    """The results editor: a url's title and snippet as shown in results."""

    list_display = ("url", "title", "edited_at")
    search_fields = ("url", "title", "snippet")
    fields = ("url", "title", "snippet")


class AppearanceForm(forms.ModelForm):
    """The appearance with a logo upload (PNG, JPEG or GIF up to ``MAX_LOGO_BYTES``), a box to
    remove it, footer links checked line by line and colours with readable contrast."""

    logo_file = forms.FileField(
        label="Logo", required=False,
        help_text="A PNG, JPEG or GIF image up to 256 KB, shown beside the name (about 40 "
                  "pixels high).")
    remove_logo = forms.BooleanField(label="Remove the logo", required=False)
    logo: tuple[bytes, str] | None = None  # the checked upload's (bytes, content type)

    class Meta:
        model = Appearance
        fields = ("site_name", "accent_color", "link_color", "header_color", "footer_links")

    def clean_site_name(self) -> str:
        name = " ".join((self.cleaned_data.get("site_name") or "").split())
        if not name:
            raise ValidationError("Give the site a name.")
        return name

    def clean_footer_links(self) -> str:
        text = self.cleaned_data.get("footer_links") or ""
        try:
            footer_links(text)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        return text

    def clean_logo_file(self) -> UploadedFile | None:
        upload = self.cleaned_data.get("logo_file")
        if upload is None:
            return None
        if upload.size > MAX_LOGO_BYTES:
            raise ValidationError("The logo is larger than 256 KB.")
        data = upload.read()
        kind = logo_type(data)
        if kind is None:
            raise ValidationError("The logo must be a PNG, JPEG or GIF image.")
        self.logo = (data, kind)
        return upload

    def clean(self) -> dict:
        data = super().clean()
        accent, link, header = (data.get(k) for k in ("accent_color", "link_color",
                                                       "header_color"))
        pairs = (("accent_color", accent, "#ffffff", "white text on the accent colour"),
                 ("link_color", link, "#ffffff", "links on the white page"),
                 ("header_color", header, "#1a1a1a", "dark text on the header"))
        for field, colour, other, what in pairs:
            if colour and HEX.match(colour) and contrast(colour, other) < MIN_CONTRAST:
                self.add_error(field, f"Too little contrast for {what}: "
                                      f"{contrast(colour, other):.1f} to 1, at least "
                                      f"{MIN_CONTRAST} is needed.")
        return data

    def save(self, commit: bool = True) -> Appearance:
        row = super().save(commit=False)
        if self.logo is not None:
            row.logo, row.logo_type = self.logo
        elif self.cleaned_data.get("remove_logo"):
            row.logo, row.logo_type = b"", ""
        if commit:
            row.save()
        return row


@admin.register(Appearance)
class AppearanceAdmin(SafeModelAdmin):
    """One row: the list goes straight to it, and it can be neither added twice nor
    deleted."""

    form = AppearanceForm
    fieldsets = ((None, {"fields": ("site_name", "logo_file", "remove_logo")}),
                 ("Colours", {"fields": ("accent_color", "link_color", "header_color")}),
                 ("Footer", {"fields": ("footer_links",)}))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None
                   ) -> Appearance | None:
        if object_id == "1":  # the one row exists from its first change page on
            return Appearance.load()
        return super().get_object(request, object_id, from_field)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        row = Appearance.load()
        return HttpResponseRedirect(reverse("admin:ranking_appearance_change", args=[row.pk]))
