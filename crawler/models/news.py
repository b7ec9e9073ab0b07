"""News sources (Yioop's Media Sources) and the items of theirs already indexed.

Layer: Django glue of the crawler app. The admin edits :class:`NewsSource` rows
(``crawler.admin.news``); the scheduled update (``crawler.news.updates``) reads the due ones,
writes their state back and records every item it indexed as a :class:`NewsItem`, so that an
item is indexed once however often its feed is read.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from crawler.core.definition.seeds import SeedUrlError, canonical_seed_url

LANGUAGE_TAG = RegexValidator(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$",
                              "A language tag such as en, de or pt-br (lower case).")
MIN_MINUTES, MAX_MINUTES = 5, 7 * 24 * 60


class NewsSource(models.Model):
    """An RSS or Atom feed read every ``update_minutes`` while ``enabled``. ``next_update_at``
    null means "at the next run"; ``last_error`` is "" after a good update."""

    name = models.CharField(max_length=80, unique=True,
                            help_text="Shown beside each of its items on the News tab.")
    url = models.CharField("feed url", max_length=2048, unique=True,
                           help_text="The RSS or Atom feed (an http or https url).")
    language = models.CharField(
        max_length=12, blank=True, validators=[LANGUAGE_TAG],
        help_text="The items' language, e.g. en; empty: the feed's own, else guessed.")
    update_minutes = models.PositiveIntegerField(
        "update every (minutes)", default=60,
        validators=[MinValueValidator(MIN_MINUTES), MaxValueValidator(MAX_MINUTES)])
    enabled = models.BooleanField(default=True)
    last_update_at = models.DateTimeField(null=True, blank=True, editable=False)
    next_update_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.CharField(max_length=400, blank=True, default="", editable=False)
    last_new_items = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["name"]
        verbose_name = "news source"

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        self.name = " ".join((self.name or "").split())
        if not self.name:
            raise ValidationError({"name": "Give the source a name."})
        try:
            self.url = canonical_seed_url(self.url or "")
        except SeedUrlError as exc:
            raise ValidationError({"url": str(exc)}) from None


class NewsItem(models.Model):
    """An item indexed in the news index (by its canonical url, once)."""

    source = models.ForeignKey(NewsSource, on_delete=models.CASCADE, related_name="items")
    url = models.CharField(max_length=2048, unique=True)
    title = models.CharField(max_length=300, blank=True)
    published_at = models.DateTimeField()
    indexed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-published_at"]
        verbose_name = "news item"

    def __str__(self) -> str:
        return self.title or self.url
