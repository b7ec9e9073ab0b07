"""Selectors turn rows into the frozen config objects that core code receives."""

import dataclasses

import pytest

from crawler import selectors, services
from crawler.core.definition.crawl import (
    CrawlConfig,
    CrawlOrder,
    CrawlTimeOptions,
    Summarizer,
)
from crawler.models import PageOptions, Scraper
from indexer.core.policies import CrawlPolicy
from ranking import selectors as search_selectors
from ranking.core.options import SearchOptions

pytestmark = pytest.mark.django_db


def test_crawl_config_is_frozen_and_complete(make_crawl, options):
    scraper = Scraper.objects.create(name="wp", signature="//meta", priority=2,
                                     delete_paths="//nav\n//footer",
                                     extract_fields="AUTHOR=//span\nKIND:=blog")
    options.scrapers.add(scraper)
    options.summarizer = "centroid"
    options.file_types = "html, pdf"
    options.save()
    crawl = make_crawl(seeds=("https://a.com/x", "https://b.org/"), order="opic",
                       max_pages=100, restrict_to_seeds=True,
                       allowed_sites="domain:c.net", disallowed_sites="regex:/private/")
    config = selectors.crawl_config_get(crawl.pk)
    assert isinstance(config, CrawlConfig)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_pages = 5
    assert config.order is CrawlOrder.OPIC and config.max_pages == 100
    assert [s.url for s in config.seeds] == ["https://a.com/x", "https://b.org/"]
    assert config.seeds[0].policy is CrawlPolicy.DEFAULT
    assert config.site_rules.permits("https://a.com/other")
    assert config.site_rules.permits("https://www.c.net/")
    assert not config.site_rules.permits("https://a.com/private/1")
    assert not config.site_rules.permits("https://elsewhere.com/")
    page = config.page_options
    assert page.summarizer is Summarizer.CENTROID and page.file_types == ("html", "pdf")
    assert page.scrapers[0].delete_paths == ("//nav", "//footer")
    assert page.scrapers[0].extract_fields == (("AUTHOR", "//span"), ("KIND", ":=blog"))


def test_started_crawl_reads_its_snapshot(make_crawl, options):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    options.max_links_to_extract = 7
    options.min_results_to_group = 50
    options.save()
    assert selectors.crawl_config_get(crawl.pk).page_options.max_links_to_extract == 100_000
    assert search_selectors.search_options_get(crawl.pk).min_results_to_group == 500
    assert search_selectors.search_options_get().min_results_to_group == 50
    assert [c.crawl_id for c in selectors.active_crawls_get()] == [crawl.pk]


def test_search_options_match_the_model_defaults(options):
    assert search_selectors.search_options_get() == SearchOptions()


def test_crawl_time_options_match_the_model_defaults(options):
    """The default Page Options row a user gets is what the benchmarks measure as "the
    defaults" (CrawlTimeOptions())."""
    assert selectors.crawl_time_options_from(selectors.page_options_snapshot(options)) == \
        CrawlTimeOptions()


def test_summary_only_profile_keeps_the_seed_indexing():
    summary_only = PageOptions.objects.get(name="Summary only")
    page = selectors.crawl_time_options_from(selectors.page_options_snapshot(summary_only))
    assert not page.index_whole_page
    assert (page.max_links_to_extract, page.max_description_len) == (50, 2000)
    assert page.byte_range == 1_000_000
    assert not summary_only.is_default


def test_a_snapshot_without_the_whole_page_option_indexed_summaries(make_crawl, options):
    """Crawls started before the option existed are resumed as they ran."""
    snapshot = selectors.page_options_snapshot(options)
    del snapshot["index_whole_page"]
    assert not selectors.crawl_time_options_from(snapshot).index_whole_page


def test_missing_crawl():
    with pytest.raises(selectors.ConfigNotFound):
        selectors.crawl_config_get(12345)
    assert selectors.active_crawls_get() == ()
    assert selectors.queue_servers_list() == ()
