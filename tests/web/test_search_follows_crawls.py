"""A new crawl is searched when it ends unless an admin pinned another choice, and the pages
say which (issue 39, item 4): a second crawl used never to be searched by itself, and
``site:`` its host said only "No results". Through the test client over real bundles (the
helpers of tests/web/test_search_index_choice.py) and the crawl services' own transitions,
which send the lifecycle signals the search-index choice follows."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from crawler import services
from crawler.models import Crawl
from searchindex import services as index_services
from searchindex.models import SearchIndex
from searchindex.selectors import search_index_get
from tests.unit.ranking.helpers import text_doc
from tests.web.test_search_index_choice import build, ended_crawl, search_service_dir, urls

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(search_work):
    return search_work


def page_of(host: str, name: str):
    """A lighthouse page at ``host``'s root with the meta words ``info:`` and ``site:``."""
    url = f"https://{host}/"
    return text_doc(url, f"{name} lighthouse", "lighthouse keeper",
                    meta=(f"info:{url}", "site:all", f"site:{host}"))


def run_to_the_end(make_crawl, name: str, host: str) -> Crawl:
    """A crawl started, indexing one lighthouse page of ``host``, and ended by itself."""
    crawl = make_crawl(name=name)
    services.crawl_start(crawl.pk)
    build(search_service_dir(crawl), [page_of(host, name)])
    Crawl.objects.filter(pk=crawl.pk).update(documents_indexed=1)
    services.crawl_finish(crawl.pk, analyse=False)
    crawl.refresh_from_db()
    return crawl


def test_each_crawl_that_ends_is_searched_until_an_admin_pins_one(client, make_crawl, work):
    first = ended_crawl(make_crawl, work, "flask", [
        ("https://flask.example/", "Flask lighthouse", "the lighthouse")])
    run_to_the_end(make_crawl, "python", "python.example")
    assert urls(client, "site:python.example lighthouse") == ["https://python.example/"]
    assert SearchIndex.objects.get(pk=1).mode == SearchIndex.Mode.NEWEST  # automatic
    run_to_the_end(make_crawl, "postgres", "postgres.example")
    assert urls(client, "lighthouse") == ["https://postgres.example/"]

    index_services.search_index_use("crawl", crawl_id=first.pk)  # pinned by an admin
    run_to_the_end(make_crawl, "sqlite", "sqlite.example")
    assert urls(client, "lighthouse") == ["https://flask.example/"]
    assert SearchIndex.objects.get(pk=1).crawl_id == first.pk
    assert search_index_get().timestamps == (first.timestamp,)  # not second, third, fourth


def test_no_results_names_the_crawl_holding_the_site(client, admin_client, make_crawl, work):
    first = ended_crawl(make_crawl, work, "flask", [
        ("https://flask.example/", "Flask lighthouse", "the lighthouse")])
    index_services.search_index_use("crawl", crawl_id=first.pk)
    python = run_to_the_end(make_crawl, "python", "python.example")
    # staff see every crawl; an anonymous user only crawls open to anyone
    html = admin_client.get("/", {"q": "site:python.example lighthouse"}).content.decode()
    assert "No results" in html and "in crawl &#x27;flask&#x27;" in html
    note = re.search(r'<p class="elsewhere" id="elsewhere-(\d+)">(.*?)</p>', html, re.S)
    assert note and int(note.group(1)) == python.timestamp
    assert "python.example" in note.group(2) and "crawl &#x27;python&#x27;" in note.group(2)
    href = re.search(r'href="([^"]+)"', note.group(2)).group(1).replace("&amp;", "&")
    assert f"its={python.timestamp}" in href
    followed = admin_client.get(href).content.decode()
    assert 'href="https://python.example/"' in followed
    data = admin_client.get("/", {"q": "site:python.example lighthouse", "f": "json"}).json()
    assert [e["its"] for e in data["elsewhere"]] == [python.timestamp]
    assert client.get("/", {"q": "site:python.example lighthouse", "f": "json"}).json()[
        "elsewhere"] == []  # not public: not named to anonymous users
    Crawl.objects.filter(pk=python.pk).update(public=True)
    assert [e["crawl"] for e in client.get("/", {"q": "site:python.example lighthouse",
                                                 "f": "json"}).json()["elsewhere"]] == \
        [f"crawl 'python' ({python.timestamp})"]
    # a query with a result, or without site:, looks nowhere else
    assert client.get("/", {"q": "nothinghere", "f": "json"}).json()["elsewhere"] == []


def test_admin_pages_say_whether_a_crawl_that_ends_is_searched(admin_client, make_crawl, work):
    first = ended_crawl(make_crawl, work, "flask", [
        ("https://flask.example/", "Flask lighthouse", "the lighthouse")])
    running = make_crawl(name="python")
    services.crawl_start(running.pk)
    status = reverse("admin:crawler_crawl_status", args=[running.pk])
    page = admin_client.get(status).content.decode()
    assert "This crawl becomes the searched index when it ends with pages." in page
    listing = admin_client.get(reverse("admin:crawler_crawl_changelist")).content.decode()
    assert "Automatic: each crawl that ends with pages becomes the searched index." in listing
    index_services.search_index_use("crawl", crawl_id=first.pk)
    page = admin_client.get(status).content.decode()
    assert "pinned by an admin: this crawl is not searched when it ends" in page
    form = admin_client.get(reverse("admin:searchindex_searchindex_change", args=[1]))
    assert "Pinned: search reads crawl &#x27;flask&#x27;" in form.content.decode()
    first_page = admin_client.get(reverse("admin:crawler_crawl_status", args=[first.pk]))
    assert "Search reads this crawl" in first_page.content.decode()


@pytest.mark.parametrize("query", ["site:", "site:%", "site:all x", "site:" + "a" * 3000,
                                   "site:ex\x00ample.com"])
def test_odd_site_queries_never_fail(client, make_crawl, work, query):
    ended_crawl(make_crawl, work, "flask", [("https://flask.example/", "Flask", "lighthouse")])
    assert client.get("/", {"q": query}).status_code == 200
    assert client.get("/", {"q": query, "f": "json"}).status_code == 200


def test_every_finished_crawl_as_the_index_choice(client, admin_client, make_crawl, work):
    # issue 39, item 4's alternative: search reads every finished crawl, each new one added
    # as it ends (a mix of them all, chosen once on the Search index page)
    ended_crawl(make_crawl, work, "flask", [
        ("https://flask.example/", "Flask lighthouse", "the lighthouse")])
    form = reverse("admin:searchindex_searchindex_change", args=[1]) \
        if SearchIndex.objects.filter(pk=1).exists() else \
        reverse("admin:searchindex_searchindex_add")
    response = admin_client.post(form, {"mode": "all", "crawl": "", "mix": ""})
    assert response.status_code == 302, response.content.decode()[:3000]
    assert SearchIndex.objects.get(pk=1).mode == SearchIndex.Mode.ALL
    running = make_crawl(name="python")
    services.crawl_start(running.pk)
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[running.pk]))
    assert "searched with every other finished crawl when it ends" in page.content.decode()
    build(search_service_dir(running), [page_of("python.example", "python")])
    Crawl.objects.filter(pk=running.pk).update(documents_indexed=1)
    services.crawl_finish(running.pk, analyse=False)
    run_to_the_end(make_crawl, "postgres", "postgres.example")
    assert sorted(urls(client, "lighthouse")) == [
        "https://flask.example/", "https://postgres.example/", "https://python.example/"]
    assert SearchIndex.objects.get(pk=1).mode == SearchIndex.Mode.ALL  # still the choice
    assert search_index_get().kind == "all" and len(search_index_get().timestamps) == 3
    listing = admin_client.get(reverse("admin:crawler_crawl_changelist")).content.decode()
    assert "search reads every finished crawl" in listing
