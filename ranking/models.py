"""Rows of the search side: curated results (``ranking.core.search.curation``) and the site's
appearance (:class:`Appearance`).

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
