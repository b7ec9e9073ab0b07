"""Rows of the search side: curated results (``ranking.core.search.curation``).

Layer: Django glue. Written in the admin (``ranking.admin``), read by
``ranking.selectors.curation_get``; the search service keeps what it read for
``SEARCH_OPTIONS_TTL`` seconds.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
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
