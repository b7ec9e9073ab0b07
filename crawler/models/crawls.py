"""Crawl rows: a crawl with its parameters, state and counters, its seed sites, and samples of
its counters over time.

Layer: Django glue. Validation lives in ``clean()`` methods and field validators that call the
pure parsers in ``crawler.core``; state changes go through ``crawler.services`` only; reads that
feed crawl processes go through ``crawler.selectors``, which turn rows into frozen config objects.
"""

from __future__ import annotations

import time

from django.core.exceptions import ValidationError
from django.db import models

from crawler.core.definition.crawl import CrawlOrder, CrawlStatus
from crawler.core.definition.seeds import SeedUrlError, canonical_seed_url
from indexer.core.policies import CrawlPolicy

from .. import validators
from .fields import enum_choices, in_range
from .page_options import PageOptions


def _new_timestamp() -> int:
    """A crawl's timestamp id: seconds since the epoch, unique among crawls (see Crawl.save)."""
    return int(time.time())


class Crawl(models.Model):
    """One crawl: its parameters, its state and its counters.

    A web crawl fetches from its seed sites; an *archive crawl* (``source`` warc or crawl)
    re-indexes pages already fetched, with its Page Options, through the same queue servers
    and fetchers (``crawler.core.archive``): the pages of WARC files, or an earlier crawl's
    stored pages. Its seeds, if any, only give link analysis its trust."""

    class Source(models.TextChoices):
        WEB = "web", "Web crawl: fetch from the seed sites"
        WARC = "warc", "Archive crawl of WARC files"
        CRAWL = "crawl", "Archive crawl of an earlier crawl"

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    public = models.BooleanField(
        "open to anonymous search", default=False,
        help_text="Anyone may search this crawl by its timestamp (its=) and see its cached "
                  "pages. Unticked, only staff users may, unless it is the index chosen for "
                  "search or in a public crawl mix.")
    timestamp = models.BigIntegerField(
        unique=True, default=_new_timestamp, editable=False,
        help_text="The crawl's id on disk and in the index (seconds since the epoch).")
    status = models.CharField(
        max_length=10, default=CrawlStatus.NEW.value, editable=False,
        choices=[(s.value, s.value.capitalize()) for s in CrawlStatus])
    # The crawl's channel (Yioop's word) while it is running or stopping, None otherwise: 0 to
    # MAX_ACTIVE_CRAWLS - 1. Several crawls run at once, each on its own channel; the unique
    # constraint lets the database itself refuse two crawls on one channel, so two starts at
    # the same moment never exceed the limit (crawler.services).
    channel = models.PositiveSmallIntegerField(
        null=True, default=None, unique=True, editable=False,
        help_text="The channel of an active crawl: crawls on different channels run at the "
                  "same time, each with its own queue and index.")
    order = models.CharField(
        "crawl order", max_length=20, default=CrawlOrder.HOST_BUDGETING.value,
        choices=enum_choices(CrawlOrder, {"breadth_first": "Breadth first",
                                      "host_budgeting": "Host budgeting",
                                      "opic": "Page importance (OPIC)"}))
    max_pages = models.PositiveIntegerField(
        default=0, validators=in_range(0, 10_000_000_000),
        help_text="Stop after this many pages are fetched; 0 for no limit.")
    max_depth = models.IntegerField(
        default=-1, validators=in_range(-1, 255),
        help_text="Links further than this from a seed are not followed; -1 for no limit.")
    recrawl_days = models.IntegerField(
        "recrawl frequency (days)", default=-1, validators=in_range(-1, 365),
        help_text="Start the crawl over after this many days (counted from its start; it "
                  "must have ended by itself): a new crawl builds a new index while search "
                  "keeps answering from this one, which it replaces once complete. -1 never.")
    max_domain_share = models.PositiveSmallIntegerField(
        "fair share per domain (%)", default=100, validators=in_range(1, 100),
        help_text="The largest share of any schedule one company-level domain may take, so a "
                  "focused crawl does not collapse onto a few domains. 1 to 100; 100: no cap.")
    favor_tier_bonus = models.PositiveSmallIntegerField(
        "favor: tiers sooner", default=1, validators=in_range(0, 10),
        help_text="Urls reached from a favored seed are scheduled this many tiers sooner.")
    distrust_tier_penalty = models.PositiveSmallIntegerField(
        "distrust: tiers later", default=2, validators=in_range(0, 10),
        help_text="Urls reached from a distrusted seed or an unsafe page wait this many tiers.")
    distrust_max_depth = models.SmallIntegerField(
        "distrust: links followed", default=2, validators=in_range(-1, 255),
        help_text="Distrusted urls further than this from where distrust began are not "
                  "queued; -1 follows them all.")
    policy_within_domain = models.BooleanField(
        "seed policies stay in their domain", default=False,
        help_text="A favored or distrusted seed's policy reaches only the pages of its own "
                  "registered domain (seed 004: \"perhaps only for pages belonging to the same "
                  "domain\"); its links to other domains are crawled and trusted as default.")
    needy_threshold = models.FloatField(
        "needy query threshold", default=0.5, validators=in_range(0.0, 1.0),
        help_text="A searched query whose mean top-10 relevance is below this is needy: urls "
                  "whose url and anchor text match it are crawled first. Relevance is a "
                  "result's share of the most its query's words can give (0 to 1; a missing "
                  "result counts 0). Default 0.5; 0 switches needy queries off.")
    priority_importance_weight = models.FloatField(
        "priority: importance weight", default=1.0, validators=in_range(0.0, 100.0),
        help_text="Weight of importance (the url's trust from its crawl policy and its link "
                  "weight, the mean of the two) in a needy url's priority.")
    priority_need_weight = models.FloatField(
        "priority: need weight", default=1.0, validators=in_range(0.0, 100.0),
        help_text="Weight of the need score (query frequency of matched needy queries) in a "
                  "url's priority; 0 ignores needy queries.")
    restrict_to_seeds = models.BooleanField(
        "restrict to seed and allowed sites", default=False,
        help_text="Fetch only urls on a seed's host or matching an allowed-sites rule.")
    allowed_sites = models.TextField(
        blank=True, validators=[validators.validate_site_rules],
        help_text="One rule per line: host, domain:example.com, regex:pattern or a url prefix. "
                  "Edits reach a running crawl within a minute.")
    disallowed_sites = models.TextField(
        blank=True, validators=[validators.validate_disallowed_sites],
        help_text="Urls matching any of these rules are never fetched (same syntax). A rule "
                  "ending in #N (domain:example.com#100) is a quota instead: at most N urls "
                  "of those sites per hour. Edits reach a running crawl within a minute.")
    sleep_window = models.CharField(
        "sleep window", max_length=20, blank=True,
        validators=[validators.validate_sleep_window],
        help_text="HH:MM-HH:MM in the server's time zone (for example 08:00-20:00 to crawl "
                  "only at night): no urls are fetched in these hours. Empty: none.")
    page_options = models.ForeignKey(
        PageOptions, on_delete=models.PROTECT, related_name="crawls",
        help_text="Copied when the crawl starts; later edits do not change a running crawl.")
    page_options_snapshot = models.JSONField(null=True, blank=True, editable=False)
    source = models.CharField(
        "crawl source", max_length=10, choices=Source.choices, default=Source.WEB,
        help_text="An archive crawl downloads nothing: it re-indexes the pages of WARC files or "
                  "of an earlier crawl with this crawl's Page Options (page processors, "
                  "summarizer, scrapers, page rules).")
    archive_path = models.CharField(
        "WARC file or folder", max_length=1000, blank=True,
        help_text="For an archive crawl of WARC files: the absolute path of a .warc or "
                  ".warc.gz file, or of a folder of them, readable by every fetcher.")
    archive_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT,
        related_name="archive_crawls", verbose_name="earlier crawl",
        help_text="For an archive crawl of an earlier crawl: the crawl whose stored pages are "
                  "indexed again (it must have ended; it cannot be deleted while this crawl "
                  "exists).")

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, editable=False)
    stopped_at = models.DateTimeField(null=True, blank=True, editable=False)

    # counters, written by the queue servers' reports
    pages_fetched = models.BigIntegerField(default=0, editable=False)
    urls_seen = models.BigIntegerField(default=0, editable=False)
    urls_queued = models.BigIntegerField(default=0, editable=False)
    documents_indexed = models.BigIntegerField(default=0, editable=False)
    fetch_errors = models.BigIntegerField(default=0, editable=False)
    bytes_downloaded = models.BigIntegerField(default=0, editable=False)
    hosts_seen = models.BigIntegerField(default=0, editable=False)
    # robots.txt answers and failures by kind, with an example of each (the queue servers'
    # reports summed: crawler.core.queue_server.robots_failures), and why a crawl that ended by itself with
    # nothing indexed did
    robots_failures = models.JSONField(default=dict, blank=True, editable=False)
    end_reason = models.TextField(blank=True, editable=False)
    # failed page downloads by kind, with an example of each (the queue servers' reports
    # summed: crawler.core.transport.fetch_error_kinds)
    fetch_error_kinds = models.JSONField(default=dict, blank=True, editable=False)
    # the copies' fetch times and the urls by the outcome of their last visit (the queue
    # servers' reports merged: crawler.core.queue_server.freshness)
    freshness = models.JSONField(default=dict, blank=True, editable=False)
    # a repeat crawl (recrawl_days): the crawl it repeats, whose index search keeps until
    # this one ends complete; replaced_at: when a repeat of this crawl replaced it in search
    repeat_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="repeats", editable=False)
    replaced_at = models.DateTimeField(null=True, blank=True, editable=False)
    # an archive crawl's records skipped, by reason, with an example of each (the queue
    # servers' reports summed: crawler.core.archive.skipped)
    archive_skipped = models.JSONField(default=dict, blank=True, editable=False)

    class Meta:
        ordering = ["-timestamp"]

    def __str__(self) -> str:
        return f"{self.name} ({self.timestamp})"

    @property
    def is_active(self) -> bool:
        return self.status in (CrawlStatus.RUNNING, CrawlStatus.STOPPING)

    @property
    def is_archive(self) -> bool:
        return self.source != Crawl.Source.WEB

    def clean(self) -> None:
        super().clean()
        if self.source == Crawl.Source.WARC:
            errors = validators.archive_path_errors(self.archive_path)
            if errors:
                raise ValidationError({"archive_path": errors})
        elif self.source == Crawl.Source.CRAWL:
            if self.archive_of_id is None:
                raise ValidationError({"archive_of": "Choose the crawl to index again."})
            if self.pk is not None and self.archive_of_id == self.pk:
                raise ValidationError({"archive_of": "A crawl cannot index itself again."})

    def save(self, *args, **kwargs) -> None:
        if self._state.adding:
            # Two crawls created in the same second still get distinct timestamp ids.
            while Crawl.objects.filter(timestamp=self.timestamp).exists():
                self.timestamp += 1
        super().save(*args, **kwargs)


class SeedSite(models.Model):
    """A starting url of a crawl, with its crawling policy (seed 004) and trust weight."""

    crawl = models.ForeignKey(Crawl, on_delete=models.CASCADE, related_name="seeds")
    url = models.CharField(
        max_length=2048,
        help_text="An http or https url; it is stored in canonical form (lower-case host, "
                  "no default port, no fragment).")
    policy = models.CharField(
        max_length=10, default=CrawlPolicy.DEFAULT.value,
        choices=enum_choices(CrawlPolicy, {"favor": "Favor", "default": "Default",
                                       "distrust": "Distrust"}),
        help_text="Favor spreads trust to the pages this seed reaches, distrust spreads "
                  "distrust; default is neutral.")
    trust_weight = models.FloatField(
        default=1.0, validators=in_range(0.0, 100.0),
        help_text="How much trust (or distrust) the seed starts with. 0 to 100; default 1.")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["crawl", "url"], name="unique_seed_per_crawl"),
        ]

    def __str__(self) -> str:
        return self.url

    def clean(self) -> None:
        super().clean()
        try:
            self.url = canonical_seed_url(self.url or "")
        except SeedUrlError as exc:
            raise ValidationError({"url": str(exc)}) from None
        if self.crawl_id and SeedSite.objects.filter(crawl_id=self.crawl_id, url=self.url) \
                .exclude(pk=self.pk).exists():
            raise ValidationError({"url": f"{self.url} is already a seed of this crawl."})


class CrawlSample(models.Model):
    """A crawl's counters at one moment, for the dashboard's pages-per-second chart."""

    crawl = models.ForeignKey(Crawl, on_delete=models.CASCADE, related_name="samples")
    at = models.DateTimeField(db_index=True)
    pages_fetched = models.BigIntegerField()
    documents_indexed = models.BigIntegerField()
    fetch_errors = models.BigIntegerField()

    class Meta:
        ordering = ["at"]
