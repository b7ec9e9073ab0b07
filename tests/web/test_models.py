"""Validation of every crawl-management model, through full_clean as the admin does it."""

import pytest
from django.core.exceptions import ValidationError

from crawler.models import Crawl, PageOptions, QueueServer, Scraper, SeedSite

pytestmark = pytest.mark.django_db


def errors_of(instance) -> dict:
    with pytest.raises(ValidationError) as info:
        instance.full_clean()
    return info.value.message_dict


def test_default_page_options_exist_with_the_seed_defaults():
    """The seed's defaults, but for those chosen by measurement (issue 16): whole pages
    indexed, every link kept, 4,000,000 bytes a page; the "Summary only" profile keeps the
    seed's."""
    options = PageOptions.objects.get(is_default=True)
    assert options.byte_range == 4_000_000
    assert options.max_description_len == 2000
    assert options.index_whole_page
    assert options.max_links_to_extract == 100_000
    assert options.min_results_to_group == 500
    assert options.server_alpha == pytest.approx(1.6)
    assert (options.title_weight, options.description_weight, options.link_weight) == (4, 1, 2)
    assert options.cld_url_bonus == 2 and options.host_url_bonus == 0.5
    options.full_clean()


@pytest.mark.parametrize(
    ("field", "value"),
    [("byte_range", 10), ("byte_range", 10**9), ("max_links_to_extract", 0),
     ("max_links_to_extract", 100_001), ("server_alpha", 0.5), ("min_results_to_group", 5),
     ("intersect_time_budget", 0.0), ("title_weight", -1.0), ("description_length", 5),
     ("page_recrawl_days", -2), ("summarizer", "fancy"), ("robots", "sometimes"),
     ("file_types", "html exe")],
)
def test_out_of_range_options_are_refused_not_clamped(field, value):
    options = PageOptions(name=f"bad {field}", **{field: value})
    assert field in errors_of(options)
    assert getattr(options, field) == value  # nothing was silently changed


def test_only_one_default_profile():
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        PageOptions.objects.create(name="second", is_default=True)


@pytest.mark.parametrize(
    ("url", "message"),
    [("example.com", "needs a scheme"), ("ftp://example.com/", "not crawlable"),
     ("http://exa mple.com", "white space"), ("http://bad_host!/", "invalid host")],
)
def test_bad_seed_url(url, message):
    crawl = Crawl.objects.create(name="c", page_options=PageOptions.objects.get(is_default=True))
    errors = errors_of(SeedSite(crawl=crawl, url=url))
    assert message in errors["url"][0]


def test_seed_is_canonicalised_and_duplicates_refused():
    crawl = Crawl.objects.create(name="c", page_options=PageOptions.objects.get(is_default=True))
    seed = SeedSite(crawl=crawl, url="HTTPS://Example.com:443")
    seed.full_clean()
    assert seed.url == "https://example.com/"
    seed.save()
    errors = errors_of(SeedSite(crawl=crawl, url="https://EXAMPLE.com/"))
    assert "already a seed" in errors["url"][0]
    other = Crawl.objects.create(name="d", page_options=PageOptions.objects.get(is_default=True))
    SeedSite(crawl=other, url="https://example.com/").full_clean()  # fine in another crawl


def test_seed_trust_weight_range():
    crawl = Crawl.objects.create(name="c", page_options=PageOptions.objects.get(is_default=True))
    assert "trust_weight" in errors_of(SeedSite(crawl=crawl, url="http://a.com/",
                                                trust_weight=-1))
    assert "policy" in errors_of(SeedSite(crawl=crawl, url="http://a.com/", policy="love"))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("allowed_sites", "ok.com\nregex:(((", "line 2"),
     ("disallowed_sites", "domain:", "line 1"),
     ("allowed_sites", "a.com\nb.com\nnot a rule", "line 3"),
     ("max_depth", 300, ""), ("max_depth", -5, ""), ("recrawl_days", 1000, "")],
)
def test_bad_crawl_fields(field, value, message):
    crawl = Crawl(name="c", page_options=PageOptions.objects.get(is_default=True), **{field: value})
    errors = errors_of(crawl)
    assert field in errors
    assert message in errors[field][0]


def test_crawl_timestamps_are_unique_ids():
    options = PageOptions.objects.get(is_default=True)
    first = Crawl.objects.create(name="a", page_options=options)
    second = Crawl.objects.create(name="b", page_options=options)
    assert first.timestamp != second.timestamp
    assert first.status == "new"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("signature", "//div[", "invalid XPath"),
     ("signature", "(unclosed", "invalid regular expression"),
     ("signature", "", ""),
     ("text_path", "//div[@id='a'", "invalid XPath"),
     ("delete_paths", "//script\n//div[[", "line 2"),
     ("extract_fields", "AUTHOR=//span[@class='a']\nbad line", "line 2"),
     ("extract_fields", "1BAD=//a", "not a field name"),
     ("extract_fields", "TITLE=//h1[", "invalid XPath"),
     ("priority", 5000, "")],
)
def test_bad_scraper_fields(field, value, message):
    values = {"name": "s", "signature": "//meta[@name='generator']", field: value}
    errors = errors_of(Scraper(**values))
    assert field in errors
    assert message in errors[field][0]


def test_good_scraper():
    Scraper(name="wp", signature="/html/head/meta[contains(@content, 'WordPress')]",
            priority=3, text_path="//div[@class='entry']", delete_paths="//nav\n//footer",
            extract_fields="AUTHOR=//span[@class='author']\nSITE:=wordpress").full_clean()
    Scraper(name="re", signature=r"wp-content/\w+").full_clean()


def test_queue_server_validation():
    assert "base_url" in errors_of(QueueServer(server_id=0, base_url="not a url"))
    assert "server_id" in errors_of(QueueServer(server_id=5000, base_url="http://127.0.0.1:1/"))
    QueueServer(server_id=1, base_url="http://127.0.0.1:8001/").full_clean()


@pytest.mark.parametrize(
    ("rules", "where"),
    [('TITLE = "ok"\nDESCRIPTION = /a(b/c/', "line 2, column"),
     ("addMetaWords(TITLE)\nbogus(TITLE)", "line 2, column 1"),
     ('unset(TITLE)\nTITLE = "unterminated', "line 2")],
)
def test_bad_page_rules_name_line_and_column(rules, where):
    errors = errors_of(PageOptions(name="rules", page_rules=rules))
    assert where in errors["page_rules"][0]


def test_good_page_rules():
    PageOptions(name="ok", page_rules='TITLE = "Fixed"\naddMetaWords(TITLE)\n'
                                       "DESCRIPTION = /foo/bar/\nunset(KEYWORDS)").full_clean()
