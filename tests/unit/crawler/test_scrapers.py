from __future__ import annotations

import pytest

from crawler.core.definition.crawl import CrawlTimeOptions, ScraperSpec
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.errors import ScraperConfigError
from crawler.core.processing.scrapers import (
    ScraperConfig,
    parse_extract_fields,
    validate_scraper,
    validate_signature,
    validate_xpath_lines,
)

from .helpers import html

PAGE = """<html><head><meta name="generator" content="WordPress 6.1"></head><body>
<div id="nav"><a href="/home.html">Home navigation</a> Navigation words</div>
<div class="entry-content"><p>The real article text.</p><div class="ads">Buy things</div></div>
<span class="author">Jane Doe</span></body></html>"""

WORDPRESS = ScraperConfig(
    name="wordpress", signature='//meta[@name="generator"][starts-with(@content,"WordPress")]',
    priority=5, text_path='//div[@class="entry-content"]',
    delete_paths=('//div[@class="ads"]',),
    extract_fields=(("AUTHOR", '//span[@class="author"]'), ("SOURCE", ":=blog")),
)


def test_matching_scraper_chooses_text_deletes_and_extracts():
    page = html(PAGE, config=PageProcessingConfig(scrapers=(WORDPRESS,)))
    assert page.scraper == "wordpress"
    assert page.description == "The real article text."
    assert page.fields["AUTHOR"] == "Jane Doe" and page.fields["SOURCE"] == "blog"
    # Links are still taken from the whole page.
    assert [link.url for link in page.links] == ["https://example.com/home.html"]


def test_highest_priority_match_wins_and_regex_signatures():
    generic = ScraperConfig(name="generic", signature="WordPress", priority=1,
                            text_path='//div[@id="nav"]')
    page = html(PAGE, config=PageProcessingConfig(scrapers=(generic, WORDPRESS)))
    assert page.scraper == "wordpress"
    page = html(PAGE, config=PageProcessingConfig(scrapers=(generic,)))
    assert page.scraper == "generic" and "Navigation words" in page.description
    nomatch = ScraperConfig(name="mw", signature="MediaWiki", priority=9)
    assert html(PAGE, config=PageProcessingConfig(scrapers=(nomatch,))).scraper is None


def test_validation():
    validate_signature("//div")
    validate_signature("Word(Press)?")
    with pytest.raises(ScraperConfigError) as info:
        validate_signature("//div[")
    assert info.value.field == "signature"
    with pytest.raises(ScraperConfigError):
        validate_signature("Word(Press")
    with pytest.raises(ScraperConfigError) as info:
        validate_xpath_lines("//a\n\n//b[")
    assert info.value.line == 3
    with pytest.raises(ScraperConfigError) as info:  # lxml's ValueError, not a server error
        validate_xpath_lines("//a\n//b[@x='\x00']")
    assert info.value.line == 2
    assert parse_extract_fields("A=//x\nB:=lit") == (("A", "//x"), ("B", ":=lit"))
    with pytest.raises(ScraperConfigError):
        parse_extract_fields("1A=//x")
    with pytest.raises(ScraperConfigError):
        validate_scraper(ScraperConfig(name="x", signature="/", text_path="//["))


def test_config_from_crawl_options():
    spec = ScraperSpec(name="s", signature="x", priority=2, delete_paths=("//a",))
    config = PageProcessingConfig.from_options(
        CrawlTimeOptions(summarizer="graph", scrapers=(spec,), max_links_to_extract=20))
    assert config.summarizer == "graph" and config.max_links == 20
    assert config.scrapers[0] == ScraperConfig("s", "x", 2, "", ("//a",), ())
