"""Rows of the search-index choice: crawl mixes and the one ``SearchIndex`` row.

Layer: Django glue of the ``searchindex`` app. These models were the crawler app's until the
search-index choice became its own app: their tables keep their names (``crawler_crawlmix``,
``crawler_crawlmixmember``, ``crawler_searchindex``) and their rows (migration 0001 takes them
over in state only).
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from crawler.models import Crawl


class CrawlMix(models.Model):
    """Yioop's crawl mix: a named list of crawls searched together, each with a weight that
    multiplies the scores of its results. Searched when chosen as the search index, or by
    ``m:NAME`` / ``mix:NAME`` in a query (by anyone when ``public``, else by staff users)."""

    name = models.SlugField(
        max_length=100, unique=True,
        help_text="Letters, digits, - and _ only: it is typed in queries as m:NAME.")
    description = models.TextField(blank=True)
    public = models.BooleanField(
        "open to anonymous search", default=False,
        help_text="Anyone may search this mix with m:NAME, and so its crawls. Unticked, only "
                  "staff users may, unless it is the index chosen for search.")

    class Meta:
        db_table = "crawler_crawlmix"
        ordering = ["name"]
        verbose_name = "crawl mix"
        verbose_name_plural = "crawl mixes"  # not Django's "crawl mixs"

    def __str__(self) -> str:
        return self.name


class CrawlMixMember(models.Model):
    """One crawl of a mix and its weight."""

    mix = models.ForeignKey(CrawlMix, on_delete=models.CASCADE, related_name="members")
    crawl = models.ForeignKey(Crawl, on_delete=models.CASCADE, related_name="mix_memberships")
    weight = models.FloatField(
        default=1.0, validators=[MinValueValidator(0.01), MaxValueValidator(100.0)],
        help_text="Scores of this crawl's results are multiplied by this. 0.01 to 100.")

    class Meta:
        db_table = "crawler_crawlmixmember"
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["mix", "crawl"],
                                               name="unique_crawl_per_mix")]

    def __str__(self) -> str:
        return f"{self.crawl} x {self.weight:g}"


class SearchIndex(models.Model):
    """Which index the search page answers from: one row (pk 1), written by
    ``searchindex.services.search_index_use``. Without the row, the first crawl that ends with
    documents is chosen for it (and, until one has, the newest index on disk answers)."""

    class Mode(models.TextChoices):
        CRAWL = "crawl", "This crawl"
        MIX = "mix", "This crawl mix"
        NEWEST = "newest", "Always the newest finished crawl"
        ALL = "all", "Every finished crawl"

    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.CRAWL)
    crawl = models.ForeignKey(Crawl, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    mix = models.ForeignKey(CrawlMix, null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+")
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "crawler_searchindex"
        verbose_name = "search index"
        verbose_name_plural = "search index"

    def __str__(self) -> str:
        if self.mode == self.Mode.MIX:
            return f"crawl mix {self.mix}" if self.mix else "a deleted crawl mix"
        if self.mode == self.Mode.NEWEST:
            return "the newest finished crawl"
        if self.mode == self.Mode.ALL:
            return "every finished crawl"
        return f"crawl {self.crawl}" if self.crawl else "a deleted crawl"
