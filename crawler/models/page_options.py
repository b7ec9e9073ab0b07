"""Page Options profiles (Yioop's Crawl Time and Search Time options) and the admin's scrapers
they use.

Layer: Django glue. A crawl copies its profile when it starts (``Crawl.page_options_snapshot``,
``crawler.selectors.page_options_snapshot``); search reads the profile through
``crawler.selectors.page_options_data_get``. Field validators call the pure parsers in
``crawler.core`` (``crawler.validators``).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from crawler.core.definition.crawl import RobotsBehaviour, Summarizer
from crawler.core.processing.config import MAX_LINKS_LIMIT

from .. import validators
from .fields import enum_choices, in_range


class PageOptions(models.Model):
    """Yioop's Page Options (Crawl Time and Search Time) as one named, reusable profile.

    A crawl copies its Page Options when it starts (``Crawl.page_options_snapshot``) so that a
    running crawl is reproducible however the profile is edited later.
    """

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)

    # --- Crawl Time -------------------------------------------------------------------------
    byte_range = models.PositiveIntegerField(
        "byte range to download", default=4_000_000, validators=in_range(1_000, 100_000_000),
        help_text="Bytes requested per page (Range: bytes=0-N) and kept; the rest is dropped "
                  "and not indexed. 1,000 to 100,000,000; default 4,000,000 (the seed's "
                  "PAGE_RANGE_REQUEST is 1,000,000: API references' index pages are longer, "
                  "and the pages only they link to were never reached).")
    max_description_len = models.PositiveIntegerField(
        "maximum page summary length", default=2000, validators=in_range(100, 10_000_000),
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
        choices=enum_choices(Summarizer, {"basic": "Basic", "centroid": "Centroid",
                                      "centroid_weighted": "Centroid weighted",
                                      "graph": "Graph based"}),
        help_text="How sentences are scored and chosen for the page summary.")
    max_links_to_extract = models.PositiveIntegerField(
        "maximum links to keep per page", default=MAX_LINKS_LIMIT,
        validators=in_range(1, MAX_LINKS_LIMIT),
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
        "allow page recrawl after (days)", default=-1, validators=in_range(-1, 365),
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
        choices=enum_choices(RobotsBehaviour, {"follow": "Always follow",
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
        "minimum results to group", default=500, validators=in_range(10, 10_000),
        help_text="Matches taken in importance (Doc Rank) order before grouping and scoring "
                  "(n; the seed's 200 is kept by the \"Summary only\" profile). 10 to 10,000; "
                  "default 500.")
    server_alpha = models.FloatField(
        default=1.6, validators=in_range(1.0, 10.0),
        help_text="With several queue servers each is asked for n x alpha / servers results. "
                  "1.0 to 10.0; default 1.6.")
    results_per_page = models.PositiveIntegerField(
        default=10, validators=in_range(1, 100), help_text="1 to 100; default 10.")
    intersect_time_budget = models.FloatField(
        "intersect time budget (seconds)", default=3.0, validators=in_range(0.05, 60.0),
        help_text="A conjunctive query stops after this long and returns what it found, "
                  "marked partial. 0.05 to 60; default 3.")
    doc_rank_weight = models.FloatField(default=1.0, validators=in_range(0.0, 100.0),
                                        help_text="Multiplier of Doc Rank. 0 to 100; default 1.")
    link_score_weight = models.FloatField(
        default=0.5, validators=in_range(0.0, 100.0),
        help_text="Multiplier of the link-analysis boost (LinkRank relative score and trust, "
                  "from score_update) added beside Doc Rank; 0 turns it off. 0 to 100; "
                  "default 0.5.")
    relevance_weight = models.FloatField(default=1.0, validators=in_range(0.0, 100.0),
                                         help_text="Multiplier of DFR relevance. 0 to 100; default 1.")
    proximity_weight = models.FloatField(
        default=10.0, validators=in_range(0.0, 100.0),
        help_text="Proximity of the query's words (for queries of two or more words): above "
                  "0 it is fused by rank with the rest of the score (its share is the "
                  "proximity bonus); 0 leaves it out. 0 to 100; default 10.")
    title_weight = models.FloatField(default=4.0, validators=in_range(0.0, 100.0),
                                     help_text="Region weight of title words. 0 to 100; default 4.")
    description_weight = models.FloatField(
        default=1.0, validators=in_range(0.0, 100.0),
        help_text="Region weight of description words. 0 to 100; default 1.")
    link_weight = models.FloatField(default=2.0, validators=in_range(0.0, 100.0),
                                    help_text="Region weight of link text. 0 to 100; default 2.")
    host_keyword_bonus = models.FloatField(
        default=2.0, validators=in_range(0.0, 100.0),
        help_text="Added to relevance x query terms in the host / host words. 0 to 100; default 2.")
    title_bonus = models.FloatField(
        default=2.0, validators=in_range(0.0, 100.0),
        help_text="Added to relevance x query terms in the title / title words. 0 to 100; default 2.")
    path_bonus = models.FloatField(
        default=1.0, validators=in_range(0.0, 100.0),
        help_text="Added to relevance x query terms in the url path / path words. 0 to 100; "
                  "default 1.")
    cld_url_bonus = models.FloatField(
        "company-level domain url bonus", default=2.0, validators=in_range(0.0, 100.0),
        help_text="Added to Doc Rank when the url is a company-level domain root "
                  "(example.co.uk/). 0 to 100; default 2.")
    host_url_bonus = models.FloatField(
        default=0.5, validators=in_range(0.0, 100.0),
        help_text="Added to Doc Rank when the url is a host root. 0 to 100; default 0.5.")
    wiki_bonus = models.FloatField(
        default=0.5, validators=in_range(0.0, 100.0),
        help_text="Added to Doc Rank when the host is a wiki (wikipedia). 0 to 100; default 0.5.")
    num_slashes_bonus = models.FloatField(
        default=0.5, validators=in_range(0.0, 100.0),
        help_text="Added to Doc Rank as bonus / (1 + slashes in the path). 0 to 100; "
                  "default 0.5.")
    common_phrase_bonus = models.FloatField(
        default=3.0, validators=in_range(0.0, 100.0),
        help_text="Added when a result holds, with its words in order, a phrase of the query "
                  "that is common in the crawl's titles and anchor texts (the seed's common "
                  "phrases). 0 to 100; default 3.")
    proximity_bonus = models.FloatField(
        default=1.0, validators=in_range(0.0, 100.0),
        help_text="Weight of proximity in the fusion by rank with the rest of the score. "
                  "0 to 100; default 1.")
    description_length = models.PositiveIntegerField(
        "snippet length", default=150, validators=in_range(20, 2000),
        help_text="Characters of snippet under each result. 20 to 2,000; default 150.")
    min_description_length = models.PositiveIntegerField(
        default=100, validators=in_range(0, 2000),
        help_text="Descriptions of a group's members are joined until this long. 0 to 2,000; "
                  "default 100.")
    snippet_left = models.PositiveIntegerField(
        default=20, validators=in_range(0, 500),
        help_text="Characters of context before a match in a snippet. 0 to 500; default 20.")
    snippet_right = models.PositiveIntegerField(
        default=40, validators=in_range(0, 500),
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
    admin; the engine's own (``crawler.core.processing.builtin_scrapers``) are not rows: the Scrapers
    page lists them, and a row named like one replaces it in the profiles that use the row."""

    name = models.CharField(max_length=100, unique=True)
    signature = models.CharField(
        max_length=1000, validators=[validators.validate_scraper_signature],
        help_text="An XPath (starting with /) that must match a node of the page, or else a "
                  "regular expression searched in the raw page.")
    priority = models.IntegerField(
        default=0, validators=in_range(-1000, 1000),
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
