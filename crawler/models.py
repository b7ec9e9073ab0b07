"""Crawl management rows: crawls, seed sites, Page Options, scrapers and queue servers.

Layer: Django glue. Validation lives in ``clean()`` methods and field validators that call the
pure parsers in ``crawler.core``; state changes go through ``crawler.services`` only; reads that
feed crawl processes go through ``crawler.selectors``, which turn rows into frozen config objects.
"""

from __future__ import annotations

import time

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from crawler.core.definition.crawl import CrawlOrder, CrawlStatus, RobotsBehaviour, Summarizer
from crawler.core.definition.seeds import SeedUrlError, canonical_seed_url
from crawler.core.processing.config import MAX_LINKS_LIMIT
from indexer.core.policies import CrawlPolicy

from . import validators


def _choices(enum_cls, labels: dict[str, str]) -> list[tuple[str, str]]:
    return [(member.value, labels[member.value]) for member in enum_cls]


def _range(low, high):
    return [MinValueValidator(low), MaxValueValidator(high)]


def _new_timestamp() -> int:
    """A crawl's timestamp id: seconds since the epoch, unique among crawls (see Crawl.save)."""
    return int(time.time())


class PageOptions(models.Model):
    """Yioop's Page Options (Crawl Time and Search Time) as one named, reusable profile.

    A crawl copies its Page Options when it starts (``Crawl.page_options_snapshot``) so that a
    running crawl is reproducible however the profile is edited later.
    """

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)

    # --- Crawl Time -------------------------------------------------------------------------
    byte_range = models.PositiveIntegerField(
        "byte range to download", default=4_000_000, validators=_range(1_000, 100_000_000),
        help_text="Bytes requested per page (Range: bytes=0-N) and kept; the rest is dropped "
                  "and not indexed. 1,000 to 100,000,000; default 4,000,000 (the seed's "
                  "PAGE_RANGE_REQUEST is 1,000,000: API references' index pages are longer, "
                  "and the pages only they link to were never reached).")
    max_description_len = models.PositiveIntegerField(
        "maximum page summary length", default=2000, validators=_range(100, 10_000_000),
        help_text="Characters of summary (description) kept per page. 100 to 10,000,000; "
                  "default 2,000.")
    index_whole_page = models.BooleanField(
        "index the whole page", default=True,
        help_text="Every word of the downloaded text is searchable, weighted by where it "
                  "stands (title, headings, the summary's sentences, then the rest of the page "
                  "lower); the displayed description stays the summary. Off: only the title "
                  "and the summary are indexed (the seed's web-scale behaviour, which keeps "
                  "an index small: the \"Summary only\" profile).")
    summarizer = models.CharField(
        max_length=20, default=Summarizer.BASIC.value,
        choices=_choices(Summarizer, {"basic": "Basic", "centroid": "Centroid",
                                      "centroid_weighted": "Centroid weighted",
                                      "graph": "Graph based"}),
        help_text="How sentences are scored and chosen for the page summary.")
    max_links_to_extract = models.PositiveIntegerField(
        "maximum links to keep per page", default=MAX_LINKS_LIMIT,
        validators=_range(1, MAX_LINKS_LIMIT),
        help_text="Links kept per page (each is followed and its anchor text indexed for its "
                  "target). Up to 300 links are extracted and pruned to this many by terms in "
                  "the link text times its gzip ratio (the seed keeps 50); a value above 300 "
                  "extracts and keeps that many. The default, 100,000, keeps every link: "
                  "contents and back-of-book index pages carry the anchor text that finds "
                  "reference pages, and API references reach most pages only through index "
                  "pages with thousands of links. 1 to 100,000.")
    cache_pages = models.BooleanField(
        "cache whole crawled pages", default=True,
        help_text="Keep each page's bytes so that search results can show a cached copy.")
    page_recrawl_days = models.IntegerField(
        "allow page recrawl after (days)", default=-1, validators=_range(-1, 365),
        help_text="-1 never recrawls; otherwise days after which a fetched url may be fetched "
                  "again (ETag and Expires decide whether it has changed). -1 to 365.")
    file_types = models.CharField(
        "file types to index", max_length=500, blank=True,
        default=validators.DEFAULT_FILE_TYPES_TEXT,
        help_text="File extensions to crawl and index, separated by spaces or commas. Known: "
                  + ", ".join(validators.KNOWN_FILE_TYPES) + ".",
        validators=[validators.validate_file_types])
    robots = models.CharField(
        "robots.txt", max_length=10, default=RobotsBehaviour.ALWAYS_FOLLOW.value,
        choices=_choices(RobotsBehaviour, {"follow": "Always follow",
                                           "landing": "Allow landing page crawl",
                                           "ignore": "Ignore"}),
        help_text="Whether robots.txt is obeyed. Ignoring it is for sites you own.")
    page_rules = models.TextField(
        "page field extraction rules", blank=True, validators=[validators.validate_page_rules],
        help_text="Rules applied to each page's summary, one statement per line "
                  "(assignments, regex replacements, addMetaWords(field), unset(field), ...).")
    scrapers = models.ManyToManyField(
        "Scraper", blank=True, related_name="page_options",
        help_text="Scrapers this profile may use; the highest-priority matching one wins. "
                  "One named like a built-in scraper, or with its signature, replaces it.")
    disabled_builtin_scrapers = models.JSONField(
        "built-in scrapers turned off", default=list, blank=True,
        validators=[validators.validate_builtin_scraper_names],
        help_text="Names of the built-in scrapers (Drupal, MediaWiki, vBulletin, WordPress, "
                  "Open Graph video) this profile does not use; the others are used, below "
                  "the profile's own scrapers.")

    # --- Search Time ------------------------------------------------------------------------
    min_results_to_group = models.PositiveIntegerField(
        "minimum results to group", default=500, validators=_range(10, 10_000),
        help_text="Matches taken in importance (Doc Rank) order before grouping and scoring "
                  "(n; the seed's 200 is kept by the \"Summary only\" profile). 10 to 10,000; "
                  "default 500.")
    server_alpha = models.FloatField(
        default=1.6, validators=_range(1.0, 10.0),
        help_text="With several queue servers each is asked for n x alpha / servers results. "
                  "1.0 to 10.0; default 1.6.")
    results_per_page = models.PositiveIntegerField(
        default=10, validators=_range(1, 100), help_text="1 to 100; default 10.")
    intersect_time_budget = models.FloatField(
        "intersect time budget (seconds)", default=3.0, validators=_range(0.05, 60.0),
        help_text="A conjunctive query stops after this long and returns what it found, "
                  "marked partial. 0.05 to 60; default 3.")
    doc_rank_weight = models.FloatField(default=1.0, validators=_range(0.0, 100.0),
                                        help_text="Multiplier of Doc Rank. 0 to 100; default 1.")
    link_score_weight = models.FloatField(
        default=0.5, validators=_range(0.0, 100.0),
        help_text="Multiplier of the link-analysis boost (LinkRank relative score and trust, "
                  "from score_update) added beside Doc Rank; 0 turns it off. 0 to 100; "
                  "default 0.5.")
    relevance_weight = models.FloatField(default=1.0, validators=_range(0.0, 100.0),
                                         help_text="Multiplier of DFR relevance. 0 to 100; default 1.")
    proximity_weight = models.FloatField(
        default=10.0, validators=_range(0.0, 100.0),
        help_text="Proximity of the query's words (for queries of two or more words): above "
                  "0 it is fused by rank with the rest of the score (its share is the "
                  "proximity bonus); 0 leaves it out. 0 to 100; default 10.")
    title_weight = models.FloatField(default=4.0, validators=_range(0.0, 100.0),
                                     help_text="Region weight of title words. 0 to 100; default 4.")
    description_weight = models.FloatField(
        default=1.0, validators=_range(0.0, 100.0),
        help_text="Region weight of description words. 0 to 100; default 1.")
    link_weight = models.FloatField(default=2.0, validators=_range(0.0, 100.0),
                                    help_text="Region weight of link text. 0 to 100; default 2.")
    host_keyword_bonus = models.FloatField(
        default=2.0, validators=_range(0.0, 100.0),
        help_text="Added to relevance x query terms in the host / host words. 0 to 100; default 2.")
    title_bonus = models.FloatField(
        default=2.0, validators=_range(0.0, 100.0),
        help_text="Added to relevance x query terms in the title / title words. 0 to 100; default 2.")
    path_bonus = models.FloatField(
        default=1.0, validators=_range(0.0, 100.0),
        help_text="Added to relevance x query terms in the url path / path words. 0 to 100; "
                  "default 1.")
    cld_url_bonus = models.FloatField(
        "company-level domain url bonus", default=2.0, validators=_range(0.0, 100.0),
        help_text="Added to Doc Rank when the url is a company-level domain root "
                  "(example.co.uk/). 0 to 100; default 2.")
    host_url_bonus = models.FloatField(
        default=0.5, validators=_range(0.0, 100.0),
        help_text="Added to Doc Rank when the url is a host root. 0 to 100; default 0.5.")
    wiki_bonus = models.FloatField(
        default=0.5, validators=_range(0.0, 100.0),
        help_text="Added to Doc Rank when the host is a wiki (wikipedia). 0 to 100; default 0.5.")
    num_slashes_bonus = models.FloatField(
        default=0.5, validators=_range(0.0, 100.0),
        help_text="Added to Doc Rank as bonus / (1 + slashes in the path). 0 to 100; "
                  "default 0.5.")
    common_phrase_bonus = models.FloatField(
        default=3.0, validators=_range(0.0, 100.0),
        help_text="Added when a result holds, with its words in order, a phrase of the query "
                  "that is common in the crawl's titles and anchor texts (the seed's common "
                  "phrases). 0 to 100; default 3.")
    proximity_bonus = models.FloatField(
        default=1.0, validators=_range(0.0, 100.0),
        help_text="Weight of proximity in the fusion by rank with the rest of the score. "
                  "0 to 100; default 1.")
    description_length = models.PositiveIntegerField(
        "snippet length", default=150, validators=_range(20, 2000),
        help_text="Characters of snippet under each result. 20 to 2,000; default 150.")
    min_description_length = models.PositiveIntegerField(
        default=100, validators=_range(0, 2000),
        help_text="Descriptions of a group's members are joined until this long. 0 to 2,000; "
                  "default 100.")
    snippet_left = models.PositiveIntegerField(
        default=20, validators=_range(0, 500),
        help_text="Characters of context before a match in a snippet. 0 to 500; default 20.")
    snippet_right = models.PositiveIntegerField(
        default=40, validators=_range(0, 500),
        help_text="Characters of context after a match in a snippet. 0 to 500; default 40.")
    show_word_suggest = models.BooleanField(default=True)
    show_cache_link = models.BooleanField(default=True)
    show_similar_link = models.BooleanField(default=True)
    show_inlinks_link = models.BooleanField(default=True)
    show_result_score = models.BooleanField(default=True)

    is_default = models.BooleanField(
        default=False, help_text="Used by new crawls and by searches of no particular crawl.")

    class Meta:
        verbose_name = "page options"
        verbose_name_plural = "page options"
        constraints = [
            models.UniqueConstraint(fields=["is_default"], condition=Q(is_default=True),
                                    name="one_default_page_options"),
        ]

    def __str__(self) -> str:
        return self.name

    def validate_constraints(self, exclude=None) -> None:
        # Making this profile the default un-defaults the old one in the same transaction
        # (PageOptionsAdmin.save_model), so the one-default constraint is not a form error.
        super().validate_constraints(exclude={*(exclude or ()), "is_default"})


class Scraper(models.Model):
    """A targeted extractor for one kind of site (WordPress, MediaWiki, ...), written by the
    admin; the engine's own (``crawler.core.processing.builtin_scrapers``) are not rows: the
    Scrapers
    page lists them, and a row named like one replaces it in the profiles that use the row."""

    name = models.CharField(max_length=100, unique=True)
    signature = models.CharField(
        max_length=1000, validators=[validators.validate_scraper_signature],
        help_text="An XPath (starting with /) that must match a node of the page, or else a "
                  "regular expression searched in the raw page.")
    priority = models.IntegerField(
        default=0, validators=_range(-1000, 1000),
        help_text="Among matching scrapers the highest priority wins. -1000 to 1000.")
    text_path = models.CharField(
        "text XPath", max_length=1000, blank=True, validators=[validators.validate_xpath],
        help_text="XPath whose first match is the part of the page that is summarised.")
    delete_paths = models.TextField(
        "delete XPaths", blank=True, validators=[validators.validate_xpath_lines],
        help_text="One XPath per line; matching nodes are removed before summarising.")
    extract_fields = models.TextField(
        blank=True, validators=[validators.validate_extract_fields],
        help_text="One per line: FIELD=xpath (text of the matches) or FIELD:=literal.")
    meta_words = models.TextField(
        blank=True, validators=[validators.validate_meta_words],
        help_text="One per line: prefix=xpath (each match becomes the meta word prefix:value) "
                  "or prefix:=value, with a prefix queries know (media, og, duration, "
                  "class...). Pages the scraper reads also get scraper:NAME.")

    class Meta:
        ordering = ["-priority", "name"]

    def __str__(self) -> str:
        return self.name


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
    timestamp = models.BigIntegerField(
        unique=True, default=_new_timestamp, editable=False,
        help_text="The crawl's id on disk and in the index (seconds since the epoch).")
    status = models.CharField(
        max_length=10, default=CrawlStatus.NEW.value, editable=False,
        choices=[(s.value, s.value.capitalize()) for s in CrawlStatus])
    # Non-null (True) only while the crawl is running or stopping: its unique constraint lets
    # the database itself refuse a second active crawl.
    active_lock = models.BooleanField(null=True, default=None, unique=True, editable=False)
    order = models.CharField(
        "crawl order", max_length=20, default=CrawlOrder.HOST_BUDGETING.value,
        choices=_choices(CrawlOrder, {"breadth_first": "Breadth first",
                                      "host_budgeting": "Host budgeting",
                                      "opic": "Page importance (OPIC)"}))
    max_pages = models.PositiveIntegerField(
        default=0, validators=_range(0, 10_000_000_000),
        help_text="Stop after this many pages are fetched; 0 for no limit.")
    max_depth = models.IntegerField(
        default=-1, validators=_range(-1, 255),
        help_text="Links further than this from a seed are not followed; -1 for no limit.")
    recrawl_days = models.IntegerField(
        "recrawl frequency (days)", default=-1, validators=_range(-1, 365),
        help_text="Start the crawl over after this many days (counted from its start; it "
                  "must have ended by itself): a new crawl builds a new index while search "
                  "keeps answering from this one, which it replaces once complete. -1 never.")
    max_domain_share = models.PositiveSmallIntegerField(
        "fair share per domain (%)", default=100, validators=_range(1, 100),
        help_text="The largest share of any schedule one company-level domain may take, so a "
                  "focused crawl does not collapse onto a few domains. 1 to 100; 100: no cap.")
    favor_tier_bonus = models.PositiveSmallIntegerField(
        "favor: tiers sooner", default=1, validators=_range(0, 10),
        help_text="Urls reached from a favored seed are scheduled this many tiers sooner.")
    distrust_tier_penalty = models.PositiveSmallIntegerField(
        "distrust: tiers later", default=2, validators=_range(0, 10),
        help_text="Urls reached from a distrusted seed or a spam page wait this many tiers.")
    distrust_max_depth = models.SmallIntegerField(
        "distrust: links followed", default=2, validators=_range(-1, 255),
        help_text="Distrusted urls further than this from where distrust began are not "
                  "queued; -1 follows them all.")
    needy_threshold = models.FloatField(
        "needy query threshold", default=0.0, validators=_range(0.0, 1000.0),
        help_text="A searched query whose mean top-10 score is below this is needy: urls whose "
                  "url and anchor text match it are crawled first. 0 switches needy queries "
                  "off.")
    priority_importance_weight = models.FloatField(
        "priority: importance weight", default=1.0, validators=_range(0.0, 100.0),
        help_text="Weight of link, trust and OPIC importance in a needy url's priority.")
    priority_need_weight = models.FloatField(
        "priority: need weight", default=1.0, validators=_range(0.0, 100.0),
        help_text="Weight of the need score (query frequency of matched needy queries) in a "
                  "url's priority; 0 ignores needy queries.")
    restrict_to_seeds = models.BooleanField(
        "restrict to seed and allowed sites", default=False,
        help_text="Fetch only urls on a seed's host or matching an allowed-sites rule.")
    allowed_sites = models.TextField(
        blank=True, validators=[validators.validate_site_rules],
        help_text="One rule per line: host, domain:example.com, regex:pattern or a url prefix.")
    disallowed_sites = models.TextField(
        blank=True, validators=[validators.validate_site_rules],
        help_text="Urls matching any of these rules are never fetched (same syntax).")
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
    # reports summed: crawler.core.queue_server.robots_failures), and why a crawl that ended by
    # itself with nothing indexed did
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
        choices=_choices(CrawlPolicy, {"favor": "Favor", "default": "Default",
                                       "distrust": "Distrust"}),
        help_text="Favor spreads trust to the pages this seed reaches, distrust spreads "
                  "distrust; default is neutral.")
    trust_weight = models.FloatField(
        default=1.0, validators=_range(0.0, 100.0),
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


class QueueServer(models.Model):
    """A shard the name server knows: one queue server process and its web endpoint."""

    class State(models.TextChoices):
        UNKNOWN = "unknown", "Unknown"
        UP = "up", "Up"
        DOWN = "down", "Down"
        DRAINING = "draining", "Draining"

    server_id = models.PositiveIntegerField(
        unique=True, validators=_range(0, 1023),
        help_text="Shard number n: hosts with hash(host) mod servers = n belong here.")
    base_url = models.URLField(
        max_length=500, help_text="Where the name server and fetchers reach this queue server.")
    state = models.CharField(max_length=10, choices=State.choices, default=State.UNKNOWN)
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    counters = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["server_id"]

    def __str__(self) -> str:
        return f"queue server {self.server_id}"


class Fetcher(models.Model):
    """A fetcher worker process, as it last reported: every FETCHER_HEARTBEAT_SECONDS from
    its heartbeat thread, fetching or idle (``crawler.fetcher_presence``), and at the start
    and end of each schedule."""

    name = models.CharField(max_length=200, unique=True, help_text="host:pid of the process")
    host = models.CharField(max_length=200)
    pid = models.PositiveIntegerField()
    state = models.CharField(max_length=20, default="idle")  # idle or fetching
    last_heartbeat = models.DateTimeField()
    schedules_done = models.PositiveIntegerField(default=0)
    pages_fetched = models.BigIntegerField(default=0)
    last_schedule = models.CharField(max_length=100, blank=True)
    # pages per second over the process's last RATE_WINDOW seconds (its heartbeat thread)
    pages_per_second = models.FloatField(default=0.0)

    class Meta:
        ordering = ["host", "pid"]

    def __str__(self) -> str:
        return self.name


class Machine(Fetcher):
    """The Machines page in the admin's menu: a proxy whose list is that page (queue servers
    and fetcher processes, live), see ``crawler.admin_machines``."""

    class Meta:
        proxy = True
        verbose_name = "machine"
        verbose_name_plural = "machines"


class CrawlSample(models.Model):
    """A crawl's counters at one moment, for the dashboard's pages-per-second chart."""

    crawl = models.ForeignKey(Crawl, on_delete=models.CASCADE, related_name="samples")
    at = models.DateTimeField(db_index=True)
    pages_fetched = models.BigIntegerField()
    documents_indexed = models.BigIntegerField()
    fetch_errors = models.BigIntegerField()

    class Meta:
        ordering = ["at"]


class CrawlMix(models.Model):
    """Yioop's crawl mix: a named list of crawls searched together, each with a weight that
    multiplies the scores of its results. Searched when chosen as the search index, or by
    ``m:NAME`` / ``mix:NAME`` in a query."""

    name = models.SlugField(
        max_length=100, unique=True,
        help_text="Letters, digits, - and _ only: it is typed in queries as m:NAME.")
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "crawl mix"

    def __str__(self) -> str:
        return self.name


class CrawlMixMember(models.Model):
    """One crawl of a mix and its weight."""

    mix = models.ForeignKey(CrawlMix, on_delete=models.CASCADE, related_name="members")
    crawl = models.ForeignKey(Crawl, on_delete=models.CASCADE, related_name="mix_memberships")
    weight = models.FloatField(
        default=1.0, validators=_range(0.01, 100.0),
        help_text="Scores of this crawl's results are multiplied by this. 0.01 to 100.")

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["mix", "crawl"],
                                               name="unique_crawl_per_mix")]

    def __str__(self) -> str:
        return f"{self.crawl} x {self.weight:g}"


class SearchIndex(models.Model):
    """Which index the search page answers from: one row (pk 1), written by
    ``crawler.services.search_index_use``. Without the row, the first crawl that ends with
    documents is chosen for it (and, until one has, the newest index on disk answers)."""

    class Mode(models.TextChoices):
        CRAWL = "crawl", "This crawl"
        MIX = "mix", "This crawl mix"
        NEWEST = "newest", "Always the newest finished crawl"

    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.CRAWL)
    crawl = models.ForeignKey(Crawl, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    mix = models.ForeignKey(CrawlMix, null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+")
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "search index"
        verbose_name_plural = "search index"

    def __str__(self) -> str:
        if self.mode == self.Mode.MIX:
            return f"crawl mix {self.mix}" if self.mix else "a deleted crawl mix"
        if self.mode == self.Mode.NEWEST:
            return "the newest finished crawl"
        return f"crawl {self.crawl}" if self.crawl else "a deleted crawl"


# what a crawl did with its urls and hosts, and the operator's host overrides (their module)
from .host_models import CrawlHost, FetchedUrl, HostOverride, RefusalCount, RefusedUrl  # noqa: E402, F401
