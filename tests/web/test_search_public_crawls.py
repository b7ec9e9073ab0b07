"""Which crawls and crawl mixes anyone may search (issue 34, item 13): a crawl by timestamp
(``its=``) or a mix by name (``m:``/``mix=``) only when it is public, in a public mix, or the
index chosen for search; staff users may search any. Through the test client, over real bundles
written by the indexer; the migrations' data steps run on the test database."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from crawler.models import Crawl
from searchindex import services as index_services
from searchindex.models import CrawlMix, CrawlMixMember, SearchIndex
from tests.unit.ranking.helpers import text_doc
from tests.web.test_search_index_choice import build, ended_crawl

pytestmark = pytest.mark.django_db
NOT_OPEN = "open to anonymous search"


@pytest.fixture
def crawls(make_crawl, search_work):
    """A public crawl chosen for search, and an intranet crawl beside it (not public)."""
    public = ended_crawl(make_crawl, search_work, "public", [
        ("https://www.example/", "Public lighthouse", "the lighthouse keeper")])
    intranet = ended_crawl(make_crawl, search_work, "intranet", [
        ("https://intranet.example/pay", "Salaries lighthouse", "lighthouse salaries")])
    index_services.search_index_use("crawl", crawl_id=public.pk)
    return public, intranet


def answer(client, **params) -> dict:
    response = client.get("/", {"q": "lighthouse", "f": "json", **params})
    assert response.status_code == 200
    return response.json()


def result_urls(data: dict) -> list[str]:
    return [r["url"] for r in data["results"]]


def test_anyone_searches_only_public_crawls_by_timestamp(client, crawls):
    public, intranet = crawls
    assert result_urls(answer(client)) == ["https://www.example/"]
    refused = answer(client, its=intranet.timestamp)
    assert refused["results"] == [] and refused["index"] is None
    assert any(f"no crawl {intranet.timestamp} {NOT_OPEN}" in m for m in refused["messages"])
    # a timestamp no crawl has gets the same words: nothing tells whether a crawl exists
    missing = answer(client, its=intranet.timestamp + 1)
    assert any(f"no crawl {intranet.timestamp + 1} {NOT_OPEN}" in m
               for m in missing["messages"])
    Crawl.objects.filter(pk=intranet.pk).update(public=True)
    assert result_urls(answer(client, its=intranet.timestamp)) == [
        "https://intranet.example/pay"]


def test_the_crawl_chosen_for_search_is_open_by_its_timestamp(client, crawls):
    public, _ = crawls
    assert not Crawl.objects.get(pk=public.pk).public  # chosen, not ticked
    assert result_urls(answer(client, its=public.timestamp)) == ["https://www.example/"]


def test_staff_users_search_every_crawl(admin_client, crawls):
    _, intranet = crawls
    assert result_urls(answer(admin_client, its=intranet.timestamp)) == [
        "https://intranet.example/pay"]
    cached = admin_client.get("/cache", {"url": "https://intranet.example/pay",
                                         "its": intranet.timestamp})
    assert cached.status_code == 200


def test_cached_pages_suggestions_and_similar_of_a_private_crawl_are_refused(client, crawls):
    _, intranet = crawls
    cached = client.get("/cache", {"url": "https://intranet.example/pay",
                                   "its": intranet.timestamp})
    assert cached.status_code == 404 and NOT_OPEN in cached.content.decode()
    frame = client.get("/cache/frame", {"url": "https://intranet.example/pay",
                                        "its": intranet.timestamp})
    assert frame.status_code == 404 and b"salaries" not in frame.content.lower()
    similar = client.get("/similar", {"url": "https://intranet.example/pay",
                                      "its": intranet.timestamp, "f": "json"})
    assert similar.status_code == 404 and NOT_OPEN in similar.json()["reason"]
    suggest = client.get("/suggest", {"q": "sal", "its": intranet.timestamp,
                                      "f": "opensearch"})
    assert suggest.status_code == 200 and suggest.json() == ["sal", []]


def test_anyone_searches_only_public_mixes_and_their_crawls(client, crawls):
    public, intranet = crawls
    mix = CrawlMix.objects.create(name="everything")
    for crawl in (public, intranet):
        CrawlMixMember.objects.create(mix=mix, crawl=crawl)
    for params in ({"q": "lighthouse m:everything"}, {"mix": "everything"}):
        refused = answer(client, **params)
        assert refused["results"] == []
        assert any(f"no crawl mix named 'everything' with crawls in it {NOT_OPEN}" in m
                   for m in refused["messages"])
    CrawlMix.objects.filter(pk=mix.pk).update(public=True)
    assert sorted(result_urls(answer(client, q="lighthouse m:everything"))) == [
        "https://intranet.example/pay", "https://www.example/"]
    # a public mix publishes its crawls: their results' cached copies open
    assert client.get("/cache", {"url": "https://intranet.example/pay",
                                 "its": intranet.timestamp}).status_code == 200


def test_the_mix_chosen_for_search_is_open_by_its_name(client, crawls):
    public, intranet = crawls
    mix = CrawlMix.objects.create(name="chosen")
    CrawlMixMember.objects.create(mix=mix, crawl=intranet)
    index_services.search_index_use("mix", mix_id=mix.pk)
    assert result_urls(answer(client, q="lighthouse m:chosen")) == [
        "https://intranet.example/pay"]


def test_the_migrations_keep_the_searched_crawl_and_mix_public(make_crawl, crawls):
    public, intranet = crawls
    mix = CrawlMix.objects.create(name="old-mix")
    crawl_step = importlib.import_module("crawler.migrations.0024_crawl_public")
    mix_step = importlib.import_module("searchindex.migrations.0002_crawlmix_public")
    editor = SimpleNamespace(connection=connection)
    crawl_step.searched_crawl_public(apps, editor)
    mix_step.chosen_mix_public(apps, editor)
    assert set(Crawl.objects.filter(public=True)) == {public}  # the chosen crawl only
    assert not CrawlMix.objects.get(pk=mix.pk).public
    CrawlMixMember.objects.create(mix=mix, crawl=intranet)
    index_services.search_index_use("mix", mix_id=mix.pk)
    mix_step.chosen_mix_public(apps, editor)
    assert CrawlMix.objects.get(pk=mix.pk).public
    Crawl.objects.update(public=False)
    index_services.search_index_use("newest")  # the newest ended crawl with documents
    crawl_step.searched_crawl_public(apps, editor)
    assert set(Crawl.objects.filter(public=True)) == {intranet}


def test_the_admin_ticks_a_crawl_and_a_mix_public(admin_client, crawls):
    _, intranet = crawls
    page = admin_client.get(f"/admin/crawler/crawl/{intranet.pk}/change/").content.decode()
    assert 'name="public"' in page and "open to anonymous search" in page.lower()
    mixes = admin_client.get("/admin/searchindex/crawlmix/add/").content.decode()
    assert 'name="public"' in mixes


def test_without_a_choice_the_newest_index_on_disk_is_open(client, make_crawl, search_work):
    older = ended_crawl(make_crawl, search_work, "older", [
        ("https://older.example/", "Older lighthouse", "lighthouse")])
    running = make_crawl(name="running")
    build(search_work / "qs0" / f"IndexData{running.timestamp}",
          [text_doc("https://running.example/", "Running lighthouse", "lighthouse",
                    meta=("info:https://running.example/",))])
    assert not SearchIndex.objects.exists()  # search reads the newest index on disk
    assert result_urls(answer(client)) == ["https://running.example/"]
    assert client.get("/cache", {"url": "https://running.example/",
                                 "its": running.timestamp}).status_code == 200
    refused = answer(client, its=older.timestamp)
    assert refused["results"] == [] and any(NOT_OPEN in m for m in refused["messages"])
