"""The Page Options "Test" tool in the admin: pasted text, an upload, and a url fetched
through the crawler's own fetch code and egress rules."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from crawler.models import Scraper
from tests.fixtures.sites import FixtureServer, normal_site

pytestmark = pytest.mark.django_db

PAGE = """<html><head><title>Test Page</title><meta name="robots" content="noarchive"></head>
<body><div class="menu">menu links</div><div id="main"><h1>Heading</h1><p>Hello jumping world.</p>
<p>Second paragraph with <a href="/one.html">first link text</a>.</p></div>
""" + "".join(f'<a href="/l{i}.html">link number {i} words</a>' for i in range(80)) + \
    "</body></html>"


def url_for(options):
    return reverse("admin:crawler_pageoptions_test", args=[options.pk])


def test_pasted_page_shows_every_step(admin_client, options):
    options.max_links_to_extract = 10
    options.page_rules = 'TITLE = "Rewritten"\naddMetaWords(TITLE)'
    options.save()
    options.scrapers.add(Scraper.objects.create(
        name="main", signature="//div[@id='main']", text_path="//div[@id='main']"))
    assert "Test" in admin_client.get(
        reverse("admin:crawler_pageoptions_change", args=[options.pk])).content.decode()
    response = admin_client.post(url_for(options), {
        "text": PAGE, "page_url": "https://example.com/page.html", "mime_type": ""})
    body = response.content.decode()
    assert response.status_code == 200 and 'id="page-test-report"' in body
    report = response.context["report"]
    names = [s.name for s in report.steps]
    assert names == ["byte range", "page processor", "scrapers", "page rules",
                     "indexing plugins"]
    assert report.steps[1].title == "Test Page" and report.steps[3].title == "Rewritten"
    assert report.steps[2].notes == ("scraper main matched",)
    assert "menu" in report.steps[1].description and "menu" not in report.steps[2].description
    assert any(t[0] == "jump" for t in report.terms)
    assert "NOARCHIVE" in report.robot_metas
    assert len(report.links_kept) == 10 and len(report.links_dropped) >= 70
    assert any(m.startswith("site:") for m in report.meta_words)
    assert all(step.seconds >= 0 for step in report.steps)


def test_upload_is_cut_at_the_byte_range(admin_client, options):
    options.byte_range = 1000
    options.save()
    upload = SimpleUploadedFile("big.txt", b"word " * 5000, content_type="text/plain")
    response = admin_client.post(url_for(options), {"upload": upload, "mime_type": "text/plain",
                                                    "page_url": "https://example.com/big.txt"})
    report = response.context["report"]
    assert report.kept_bytes == 1000 and report.truncated
    assert "page truncated from" in response.content.decode()


def test_url_is_fetched_through_the_egress_rules(admin_client, options, settings):
    site = normal_site("testtool", pages=3, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        response = admin_client.post(url_for(options), {"url": server.url("/"), "mime_type": ""})
        assert response.context["report"].steps[1].title
        assert server.requests_for("/")
        settings.CRAWLER_ALLOWED_NETWORKS = ("public",)
        refused = admin_client.post(url_for(options), {"url": server.url("/"), "mime_type": ""})
    assert refused.context["report"] is None
    assert "Could not fetch" in refused.content.decode()


@pytest.mark.parametrize("data", [{}, {"url": "https://a.com/", "text": "x"}, {"url": "nope"}])
def test_bad_input_is_a_message(admin_client, options, data):
    response = admin_client.post(url_for(options), data)
    assert response.status_code == 200 and response.context["report"] is None
    assert response.context["form"].errors


def test_indexing_plugins_step(admin_client, options, settings):
    settings.INDEXING_PLUGINS = ("tests.fixtures.plugins.MarkerPlugin",)
    page = ("<html><head><title>Leek soup recipe</title></head><body><p>Boil the leeks."
            "</p></body></html>")
    response = admin_client.post(url_for(options), {
        "text": page, "page_url": "https://example.com/soup.html", "mime_type": ""})
    report = response.context["report"]
    assert report.steps[-1].name == "indexing plugins"
    assert report.steps[-1].notes == ("plugins run: tests.fixtures.plugins.MarkerPlugin",
                                      "1 sub-documents")
    assert "class:marked" in report.meta_words
    assert ("MARKED_BYTES", str(len(page))) in report.steps[-1].fields
    assert ("MARKED_BYTES", str(len(page))) not in report.steps[-2].fields
