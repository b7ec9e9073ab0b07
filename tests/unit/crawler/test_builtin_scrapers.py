"""The built-in scrapers (Drupal, MediaWiki, vBulletin, WordPress, Open Graph video) on pages
of their kind (tests/fixtures/cms_pages.py), on pages of no kind, and their overrides."""

from __future__ import annotations

import dataclasses

import pytest

from crawler.core.definition.crawl import CrawlTimeOptions, ScraperSpec
from crawler.core.processing.builtin_scrapers import (
    BUILTIN_NAMES,
    BUILTIN_SCRAPERS,
    builtin_scraper,
    overridden_by,
    with_builtins,
)
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.meta_words import duration_words, parse_duration
from crawler.core.processing.page import FetchedPage, ProcessedPage
from crawler.core.processing.process import PageProcessor
from crawler.core.processing.scrapers import (
    ScraperConfig,
    ScraperSet,
    scraper_word,
    validate_scraper,
)
from tests.fixtures import cms_pages

from .helpers import fixture

DEFAULTS = PageProcessingConfig.from_options(CrawlTimeOptions())
WITHOUT = dataclasses.replace(DEFAULTS, scrapers=())


def process(url: str, markup: str | bytes, config: PageProcessingConfig = DEFAULTS
            ) -> ProcessedPage:
    body = markup.encode("utf-8") if isinstance(markup, str) else markup
    return PageProcessor(config).process(FetchedPage(
        url, body, 200, {"Content-Type": "text/html; charset=utf-8"},
        fetched_at=1_700_000_000.0))


def indexed_text(page: ProcessedPage) -> str:
    return f"{page.title} {page.description} {page.body}"


@pytest.mark.parametrize("make", cms_pages.ALL_PAGES, ids=lambda m: m.__name__)
def test_each_kind_keeps_its_content_and_drops_the_chrome(make):
    cms = make()
    plain = process(cms.url, cms.html, WITHOUT)
    page = process(cms.url, cms.html)
    assert page.scraper == cms.kind
    text = indexed_text(page)
    for sentence in cms.kept:
        assert sentence in text, sentence
    for sentence in cms.dropped:
        assert sentence not in text, sentence
    # the chrome was there to drop: without the scraper, some of it is indexed
    assert any(sentence in indexed_text(plain) for sentence in cms.dropped)
    assert scraper_word(cms.kind) in page.meta_words
    # links still come from the whole page (navigation feeds the crawl)
    assert {link.url for link in plain.links} == {link.url for link in page.links}


def test_drupal_fields():
    page = process(cms_pages.drupal7_page().url, cms_pages.drupal7_page().html)
    assert page.fields["AUTHOR"] == "hollyhock"
    assert page.fields["TAGS"] == "climbers annuals"
    assert "scraper:drupal" in page.meta_words
    assert process(cms_pages.drupal10_page().url, cms_pages.drupal10_page().html
                   ).fields["AUTHOR"] == "hollyhock"


def test_mediawiki_fields_and_no_edit_links():
    cms = cms_pages.mediawiki_page()
    page = process(cms.url, cms.html)
    assert page.fields["CATEGORIES"] == "Horticulture Soilless agriculture"
    assert "edit" not in indexed_text(page).split() and "[1]" not in indexed_text(page)
    assert "scraper:mediawiki" in page.meta_words


def test_vbulletin_fields():
    cms = cms_pages.vbulletin_page()
    page = process(cms.url, cms.html)
    assert page.fields["THREAD"] == "Nutrient film question"
    assert page.fields["POSTERS"] == "grower tomatofan"
    assert "Re: Nutrient film question" in indexed_text(page)  # each post's title is kept


def test_wordpress_fields():
    cms = cms_pages.wordpress_page()
    page = process(cms.url, cms.html)
    fields = dict(page.fields)
    # the default sections plugin (issue 36) adds the page's headed sections beside them
    assert fields.pop("sections").split("\n")[0] == "comments\tOne thought on “Growing basil indoors”"
    assert fields == {"AUTHOR": "maria", "PUBLISHED": "2023-03-14T10:00:00+00:00",
                      "CATEGORIES": "Herbs", "TAGS": "basil windowsill"}
    assert page.title == "Growing basil indoors – Kitchen Garden Notes"


def test_wordpress_list_of_posts_keeps_every_post():
    cms = cms_pages.wordpress_page()
    second = ('<article id="post-58" class="post-58 post type-post hentry"><h2 '
              'class="entry-title">Chives</h2><div class="entry-content"><p>Chives come back '
              'every spring without any help.</p></div></article>')
    listing = cms.html.replace("</article><!-- #post-57 -->",
                               "</article><!-- #post-57 -->" + second).replace(
        '<link rel="canonical" href="https://blog.example.org/2023/03/growing-basil-indoors/" />',
        "")
    page = process("https://blog.example.org/", listing)
    text = indexed_text(page)
    assert cms.kept[0] in text and "Chives come back every spring" in text
    assert cms.dropped[2] not in text  # the sidebar is still left out


def test_open_graph_video_meta_words_and_fields():
    cms = cms_pages.video_page()
    page = process(cms.url, cms.html)
    assert page.media == "video"
    words = set(page.meta_words)
    assert {"scraper:open-graph-video", "media:video", "og:video.other", "duration:all",
            "duration:10-plus", "duration:20-minus"} <= words
    assert "media:text" not in words
    assert page.fields["DURATION"] == "634"
    assert page.fields["VIDEO_URL"] == "https://video.example.org/embed/tomato-pruning"
    assert page.fields["THUMBNAIL"] == "https://video.example.org/thumbs/tomato-pruning.jpg"
    assert page.fields["RELEASE_DATE"] == "2023-03-14"
    # a schema.org duration alone (no video:duration) gives the same words
    only_iso = cms.html.replace('<meta property="video:duration" content="634">', "")
    assert {"duration:10-plus", "duration:20-minus"} <= set(process(cms.url, only_iso).meta_words)
    # an og:type that is not a video is not this kind
    article = cms.html.replace('content="video.other"', 'content="article"')
    assert process(cms.url, article).scraper is None


@pytest.mark.parametrize("name", ["python-shlex.html", "postgresql-sql-delete.html",
                                  "django-pagination.html", "debian-reference-pr01.fr.html"])
def test_pages_of_no_kind_are_untouched(name):
    """Documentation pages (Sphinx, DocBook) match no built-in scraper: processed with them
    exactly as without them."""
    url = f"https://docs.example.org/{name}"
    with_them, without = process(url, fixture(name)), process(url, fixture(name), WITHOUT)
    assert with_them.scraper is None
    assert with_them == without


def test_a_plain_page_is_untouched():
    markup = ("<html><head><title>Notes</title><meta name='generator' content='Hugo 0.111'>"
              "</head><body><nav>Menu</nav><article><p>Plain article text about soil.</p>"
              "</article><div id='comments'>A comment</div></body></html>")
    url = "https://notes.example.org/soil.html"
    assert process(url, markup) == process(url, markup, WITHOUT)


def test_builtins_are_valid_and_named():
    for scraper in BUILTIN_SCRAPERS:
        validate_scraper(scraper)
        assert scraper.priority < 0  # below the admin's scrapers by default
    assert BUILTIN_NAMES == ("Drupal", "MediaWiki", "vBulletin", "WordPress",
                             "Open Graph video")
    assert builtin_scraper("wordpress") is builtin_scraper("WordPress") is not None
    assert builtin_scraper("Joomla") is None
    assert not ScraperSet(BUILTIN_SCRAPERS).reads_spans  # large pages keep their speed


def test_profile_turns_one_off_by_name():
    cms = cms_pages.wordpress_page()
    options = CrawlTimeOptions(disabled_builtin_scrapers=("wordpress",))
    config = PageProcessingConfig.from_options(options)
    assert "WordPress" not in {s.name for s in config.scrapers}
    assert process(cms.url, cms.html, config).scraper is None
    assert len(config.scrapers) == len(BUILTIN_SCRAPERS) - 1


def test_own_scraper_with_the_same_name_or_signature_wins():
    cms = cms_pages.wordpress_page()
    same_name = ScraperSpec(name="wordpress", signature="//meta[@name='generator']",
                            text_path="//aside", meta_words=(("media", ":=blog"),))
    config = PageProcessingConfig.from_options(CrawlTimeOptions(scrapers=(same_name,)))
    names = [s.name for s in config.scrapers]
    assert names.count("wordpress") == 1 and "WordPress" not in names
    page = process(cms.url, cms.html, config)
    assert page.scraper == "wordpress" and "Recent Posts" in indexed_text(page)
    assert "media:blog" in page.meta_words
    # the same signature, another name: the built-in one goes too
    same_signature = ScraperConfig(name="My blog", signature=" ".join(
        builtin_scraper("WordPress").signature.split()), priority=-500)
    kept = with_builtins((same_signature,))
    assert [s.name for s in kept].count("WordPress") == 0 and kept[0] is same_signature
    assert overridden_by(builtin_scraper("WordPress"), (same_signature,)) == "My blog"
    # another own scraper that matches the page wins by priority, the built-in one stays
    other = ScraperConfig(name="Everything", signature="//body", priority=0)
    both = with_builtins((other,))
    assert "WordPress" in {s.name for s in both}
    assert process(cms.url, cms.html, dataclasses.replace(DEFAULTS, scrapers=both)
                   ).scraper == "Everything"


def test_durations():
    assert parse_duration("634") == 634
    assert parse_duration("PT1H2M3S") == 3723 and parse_duration("P1DT1S") == 86401
    assert parse_duration("4:13") == 253 and parse_duration("1:02:03") == 3723
    for bad in ("", "PT", "soon", "-5", "1e12"):
        assert parse_duration(bad) is None
    assert duration_words(59) == ["duration:all", "duration:1-minus", "duration:5-minus",
                                  "duration:10-minus", "duration:20-minus",
                                  "duration:30-minus", "duration:60-minus"]
    assert "duration:60-plus" in duration_words(3600)


@pytest.mark.parametrize(("make", "marker"), [
    (cms_pages.drupal7_page, '<meta name="Generator" content="Drupal 7 (http://drupal.org)" />'),
    (cms_pages.mediawiki_page, '<meta name="generator" content="MediaWiki 1.39.3"/>'),
    (cms_pages.vbulletin_page, '<meta name="generator" content="vBulletin 4.2.5" />'),
    (cms_pages.wordpress_page, '<meta name="generator" content="WordPress 6.1.1" />'),
])
def test_recognised_without_the_generator_meta(make, marker):
    """Many sites remove the generator meta: the body's classes, the root's id or the paths
    of the software's assets still say which software wrote the page."""
    cms = make()
    assert marker in cms.html
    assert process(cms.url, cms.html.replace(marker, "")).scraper == cms.kind
