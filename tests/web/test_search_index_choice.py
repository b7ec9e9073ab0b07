"""Which index the search page answers from (issue 19, item 1): a crawl chosen in the admin,
kept when a newer crawl starts; the first crawl with documents chosen by itself; "always the
newest finished crawl"; crawl mixes with weights, chosen or asked for with m:/mix:; and the
page and the JSON answer naming the index and its size. Through the test client, over real
bundles written by the indexer."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from crawler import services
from crawler.core.definition.crawl import CrawlStatus
from crawler.models import Crawl
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from searchindex import services as index_services
from searchindex.models import CrawlMix, CrawlMixMember, SearchIndex
from tests.unit.ranking.helpers import index_document, text_doc

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(search_work):
    return search_work


def build(path, docs) -> None:
    """A bundle of ``docs``, each with a cached copy of its page."""
    with IndexBundleWriter(path, BundleConfig()) as writer:
        writer.append([replace(index_document(d), cached_page=f"<p>{d.url}</p>".encode())
                       for d in docs])


def ended_crawl(make_crawl, work, name: str, pages: list[tuple[str, str, str]],
                status: str = CrawlStatus.STOPPED) -> Crawl:
    """A crawl that ran and ended with ``pages`` (url, title, body) in its index."""
    crawl = make_crawl(name=name)
    build(work / "qs0" / f"IndexData{crawl.timestamp}",
          [text_doc(url, title, body, meta=(f"info:{url}",)) for url, title, body in pages])
    Crawl.objects.filter(pk=crawl.pk).update(status=status, documents_indexed=len(pages))
    crawl.refresh_from_db()
    return crawl


@pytest.fixture
def two_crawls(make_crawl, work):
    old = ended_crawl(make_crawl, work, "old", [
        ("https://old.example/a", "Old lighthouse page", "the lighthouse keeper"),
        ("https://old.example/b", "Old harbour page", "the harbour and the lighthouse")])
    new = ended_crawl(make_crawl, work, "new", [
        ("https://new.example/a", "New lighthouse guide", "a lighthouse guide"),
        ("https://new.example/b", "Another lighthouse", "more lighthouse text"),
        ("https://new.example/c", "Third page", "lighthouse beacon")])
    return old, new


def urls(client, query: str, **params) -> list[str]:
    data = client.get("/", {"q": query, "f": "json", **params}).json()
    return [r["url"] for r in data["results"]]


def test_a_chosen_crawl_keeps_answering_when_a_newer_one_starts(client, make_crawl, two_crawls):
    old, new = two_crawls
    assert all("new.example" in u for u in urls(client, "lighthouse"))  # newest on disk
    index_services.search_index_use("crawl", crawl_id=old.pk)
    assert sorted(urls(client, "lighthouse")) == ["https://old.example/a",
                                                  "https://old.example/b"]
    newer = make_crawl(name="newer")
    services.crawl_start(newer.pk)  # a crawl that starts (and may fail) changes nothing
    build(search_service_dir(newer), [text_doc("https://newer.example/", "Newer lighthouse",
                                               "lighthouse")])
    data = client.get("/", {"q": "lighthouse", "f": "json"}).json()
    assert {r["url"] for r in data["results"]} == {"https://old.example/a",
                                                   "https://old.example/b"}
    assert data["index"] == {"label": f"crawl 'old' ({old.timestamp})", "kind": "crawl",
                             "crawls": [old.timestamp], "pages": 2}
    page = client.get("/", {"q": "lighthouse"}).content.decode()
    assert f"Index: crawl &#x27;old&#x27; ({old.timestamp}) · 2 pages" in page


def search_service_dir(crawl: Crawl):
    from django.conf import settings

    return settings.WORK_DIRECTORY / "qs0" / f"IndexData{crawl.timestamp}"


def test_the_first_crawl_with_documents_makes_search_follow_finished_crawls(
        client, make_crawl, work):
    """The first crawl with documents makes the choice "the newest finished crawl" (issue 39:
    it used to pin that crawl, so a later crawl was never searched); a crawl still running is
    not searched (tests/web/test_search_follows_crawls.py: one that ends is)."""
    ended_crawl(make_crawl, work, "first", [
        ("https://first.example/", "First lighthouse", "lighthouse")])
    assert not SearchIndex.objects.exists()
    second = make_crawl(name="second")
    services.crawl_start(second.pk)
    row = SearchIndex.objects.get(pk=1)
    assert row.mode == SearchIndex.Mode.NEWEST and row.crawl is None
    build(search_service_dir(second), [text_doc("https://second.example/", "Second lighthouse",
                                                "lighthouse")])
    assert urls(client, "lighthouse") == ["https://first.example/"]


def test_a_crawl_that_finishes_empty_is_not_chosen(make_crawl, work):
    crawl = make_crawl(name="empty")
    services.crawl_start(crawl.pk)
    services.crawl_stop(crawl.pk)  # no live queue server: stopped at once, nothing indexed
    assert not SearchIndex.objects.exists()


def test_always_the_newest_finished_crawl(client, make_crawl, two_crawls):
    old, new = two_crawls
    index_services.search_index_use("crawl", crawl_id=old.pk)
    index_services.search_index_use("newest")
    assert all("new.example" in u for u in urls(client, "lighthouse"))
    running = make_crawl(name="running")
    services.crawl_start(running.pk)  # running, not finished: not searched
    build(search_service_dir(running), [text_doc("https://run.example/", "Running lighthouse",
                                                 "lighthouse")])
    assert all("new.example" in u for u in urls(client, "lighthouse"))


def test_a_mix_searches_both_crawls_with_weights(client, two_crawls):
    old, new = two_crawls
    mix = CrawlMix.objects.create(name="both", public=True)
    CrawlMixMember.objects.create(mix=mix, crawl=old, weight=50.0)
    CrawlMixMember.objects.create(mix=mix, crawl=new, weight=1.0)
    found = urls(client, "lighthouse m:both")
    assert set(found) == {"https://old.example/a", "https://old.example/b",
                          "https://new.example/a", "https://new.example/b",
                          "https://new.example/c"}
    assert all("old.example" in u for u in found[:2])  # weight 50 puts them first
    CrawlMixMember.objects.filter(crawl=old).update(weight=0.01)
    assert all("new.example" in u for u in urls(client, "lighthouse", mix="both")[:3])
    index_services.search_index_use("mix", mix_id=mix.pk)
    data = client.get("/", {"q": "lighthouse", "f": "json"}).json()
    assert len(data["results"]) == 5 and data["index"]["kind"] == "mix"
    assert data["index"]["crawls"] == [old.timestamp, new.timestamp]
    assert data["index"]["pages"] == 5


def test_a_mix_result_links_its_own_crawls_cached_copy(client, two_crawls):
    old, new = two_crawls
    mix = CrawlMix.objects.create(name="pair", public=True)
    for crawl in (old, new):
        CrawlMixMember.objects.create(mix=mix, crawl=crawl)
    page = client.get("/", {"q": "harbour mix:pair"}).content.decode()
    assert f"its={old.timestamp}" in page and "old.example%2Fb" in page
    cached = client.get("/cache", {"url": "https://old.example/b", "its": old.timestamp})
    assert cached.status_code == 200


def test_an_unknown_mix_is_a_message(client, two_crawls):
    data = client.get("/", {"q": "lighthouse m:nosuch", "f": "json"}).json()
    assert data["results"] == []
    assert any("no crawl mix named 'nosuch'" in m for m in data["messages"])


# -- the admin ------------------------------------------------------------------------------


def test_admin_use_for_search_action_and_form(admin_client, two_crawls):
    old, new = two_crawls
    url = reverse("admin:crawler_crawl_changelist")
    response = admin_client.post(url, {"action": "use_crawl_for_search",
                                       "_selected_action": [old.pk, new.pk]}, follow=True)
    assert "Select exactly one" in response.content.decode()
    response = admin_client.post(url, {"action": "use_crawl_for_search",
                                       "_selected_action": [old.pk]}, follow=True)
    assert "now answers from crawl old" in response.content.decode()
    assert SearchIndex.objects.get(pk=1).crawl == old
    form = admin_client.get(reverse("admin:searchindex_searchindex_changelist"), follow=True)
    assert form.status_code == 200 and f"crawl &#x27;old&#x27; ({old.timestamp})" in \
        form.content.decode()
    empty = CrawlMix.objects.create(name="empty")
    refused = admin_client.post(reverse("admin:searchindex_searchindex_change", args=[1]),
                                {"mode": "mix", "mix": empty.pk, "crawl": ""})
    assert refused.status_code == 200 and "has no crawls" in refused.content.decode()
    assert SearchIndex.objects.get(pk=1).mode == SearchIndex.Mode.CRAWL
    admin_client.post(reverse("admin:searchindex_searchindex_change", args=[1]),
                      {"mode": "newest", "mix": "", "crawl": ""})
    assert SearchIndex.objects.get(pk=1).mode == SearchIndex.Mode.NEWEST


def test_opening_the_choice_changes_nothing(admin_client, two_crawls):
    response = admin_client.get(reverse("admin:searchindex_searchindex_changelist"), follow=True)
    assert response.status_code == 200 and not SearchIndex.objects.exists()


def test_staff_without_the_permission_cannot_choose(client, django_user_model, two_crawls):
    old, _ = two_crawls
    user = django_user_model.objects.create_user("staff", password="pw-staff-1", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_crawl"),
                              Permission.objects.get(codename="change_crawl"))
    client.force_login(user)
    response = client.post(reverse("admin:crawler_crawl_changelist"),
                           {"action": "use_crawl_for_search", "_selected_action": [old.pk]})
    assert response.status_code in (200, 302) and not SearchIndex.objects.exists()
    assert client.get(reverse("admin:searchindex_searchindex_changelist")).status_code == 403


def test_suggestions_come_from_the_chosen_crawl(client, two_crawls):
    old, _ = two_crawls
    index_services.search_index_use("crawl", crawl_id=old.pk)
    assert "harbour" in client.get("/suggest", {"q": "harb"}).json()["suggestions"]
    index_services.search_index_use("newest")
    assert client.get("/suggest", {"q": "harb"}).json()["suggestions"] == []
