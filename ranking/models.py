"""Rows of the search side: curated results (``ranking.core.search.curation``: pins, hidden
urls and hosts, edited titles and snippets) and the site's appearance (:class:`Appearance`).

Layer: Django glue. Written in the admin (``ranking.admin``), read by
``ranking.selectors.curation_get``; the search service keeps what it read for
``SEARCH_OPTIONS_TTL`` seconds.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from crawler.core.definition.seeds import SeedUrlError, canonical_seed_url
from ranking.core.search.curation import normalize_query


def _canonical(url: str) -> str:
    try:
        return canonical_seed_url(url or "")
    except SeedUrlError as exc:
        raise ValidationError({"url": str(exc)}) from None


class PinnedResult(models.Model):
    """A url shown at a position of one query's first page of results."""

    query = models.CharField(
        max_length=300,
        help_text="The query as people type it (case and spacing do not matter).")
    url = models.CharField(max_length=2048, help_text="A page of the index (an http or https url).")
    position = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="1 is the first result.")
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["query", "position"]
        constraints = [models.UniqueConstraint(fields=["query", "url"],
                                               name="unique_pin_per_query")]

    def __str__(self) -> str:
        return f"{self.url} at {self.position} for {self.query!r}"

    def clean(self) -> None:
        super().clean()
        self.query = normalize_query(self.query or "")
        if not self.query:
            raise ValidationError({"query": "Give the query the url is pinned for."})
        self.url = _canonical(self.url)

    def save(self, *args, **kwargs) -> None:
        self.query = normalize_query(self.query or "")  # pins match normalised queries
        super().save(*args, **kwargs)


class HiddenUrl(models.Model):
    """A url never shown in results."""

    url = models.CharField(max_length=2048, unique=True,
                           help_text="A page of the index (an http or https url).")
    reason = models.CharField(max_length=200, blank=True)
    hidden_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["url"]
        verbose_name = "hidden url"

    def __str__(self) -> str:
        return self.url

    def clean(self) -> None:
        super().clean()
        self.url = _canonical(self.url)


HOST_NAME = RegexValidator(
    r"^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$",
    "A host name such as www.example.com (letters, digits, dots and dashes).")


def host_name(text: str) -> str:
    """The host a host filter names: ``text`` lower-cased, trimmed, without a trailing dot;
    a url gives its host (``https://Example.com/a`` -> ``example.com``)."""
    text = (text or "").strip().lower()
    if "://" in text:
        text = text.split("://", 1)[1]
    return text.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0] \
        .rstrip(".")


class HiddenHost(models.Model):
    """A host none of whose pages is shown in results (the results editor's host filter)."""

    host = models.CharField(max_length=253, unique=True, validators=[HOST_NAME],
                            help_text="A host name, e.g. spam.example.com (a url is cut to "
                                      "its host). Only that exact host is hidden.")
    reason = models.CharField(max_length=200, blank=True)
    hidden_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["host"]
        verbose_name = "hidden host"

    def __str__(self) -> str:
        return self.host

    def clean_fields(self, exclude=None) -> None:
        self.host = host_name(self.host)
        super().clean_fields(exclude)


class EditedResult(models.Model):
    """The title and snippet shown for a url in every result list instead of the computed
    ones (Yioop's results editor). Plain text; either may be left empty to keep the
    computed one."""

    url = models.CharField(max_length=2048, unique=True,
                           help_text="A page of the index (an http or https url).")
    title = models.CharField(max_length=200, blank=True,
                             help_text="Shown as the result's title (plain text).")
    snippet = models.TextField(max_length=1000, blank=True,
                               help_text="Shown under the title instead of the snippet "
                                         "computed for each query (plain text).")
    edited_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["url"]
        verbose_name = "edited result"

    def __str__(self) -> str:
        return self.url

    def clean(self) -> None:
        super().clean()
        self.url = _canonical(self.url)
        self.title = " ".join((self.title or "").split())
        self.snippet = " ".join((self.snippet or "").split())
        if not self.title and not self.snippet:
            raise ValidationError("Give a title, a snippet or both.")


HEX_COLOUR = RegexValidator(r"^#[0-9a-fA-F]{6}$", "A colour as #rrggbb, e.g. #0b57d0.")


class Appearance(models.Model):
    """The site's name, logo, colours and footer links (Yioop's Appearance settings): one row,
    ``pk=1`` (:meth:`load`). Read through ``ranking.searchpage.appearance``; the admin edits it
    (``ranking.admin.AppearanceAdmin``), which checks the logo and the colours' contrast."""

    site_name = models.CharField(
        max_length=40, default="Yioopy",
        help_text="Shown in the search page's header and title, the admin's header, the "
                  "OpenSearch description (its first 16 characters) and the RSS feeds.")
    logo = models.BinaryField(blank=True, default=b"", editable=False)
    logo_type = models.CharField(max_length=20, blank=True, default="", editable=False)
    accent_color = models.CharField(
        "accent colour", max_length=7, default="#0b57d0", validators=[HEX_COLOUR],
        help_text="The name, the search button and the current page (white text on it).")
    link_color = models.CharField(
        "link colour", max_length=7, default="#0b57d0", validators=[HEX_COLOUR],
        help_text="Links on the white page.")
    header_color = models.CharField(
        "header background", max_length=7, default="#ffffff", validators=[HEX_COLOUR],
        help_text="The background of the search page's header (dark text on it).")
    footer_links = models.TextField(
        blank=True, default="",
        help_text="One link a line, as: Label | https://example.com/page (or a path such as "
                  "/about). Shown in the search page's footer.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "appearance"
        verbose_name_plural = "appearance"

    def __str__(self) -> str:
        return "Appearance"

    @classmethod
    def load(cls) -> Appearance:
        """The one row, made with the defaults when missing."""
        row, _ = cls.objects.get_or_create(pk=1)
        return row

    def save(self, *args, **kwargs) -> None:
        self.pk = 1  # a singleton: every save is the one row
        super().save(*args, **kwargs)
