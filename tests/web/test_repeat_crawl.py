"""Repeat crawls (issue 21, item 3): a crawl with ``recrawl_days`` starts over that many days
after it started, as a new crawl that builds a new index while search keeps answering from
the old complete one; when the repeat ends complete it takes the old one's place in one
transaction (Yioop's double index), and the old files go after a grace period. Through the
services, the queue server's repeat keeper and the search page's JSON, over real bundles."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from crawler import services
from crawler.core.definition.crawl import CrawlStatus
from crawler.machines import repeats
from crawler.models import Crawl
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from searchindex import services as index_services
from searchindex.models import CrawlMix, CrawlMixMember, SearchIndex
from searchindex.selectors import search_index_get
from tests.unit.ranking.helpers import index_document, text_doc

pytestmark = pytest.mark.django_db

DAY = 60.0  # RECRAWL_DAY_SECONDS in these tests


@pytest.fixture
def work(search_work, settings):
    settings.RECRAWL_DAY_SECONDS = DAY
    return search_work


def bundle(work, crawl: Crawl, pages: list[tuple[str, str]], finished: bool = True) -> None:
    """``crawl``'s bundle with ``pages`` (url, body); unfinished: its writer keeps the active
    partition open, as a running crawl's indexer does (refreshed, searchable if asked for)."""
    writer = IndexBundleWriter(work / "qs0" / f"IndexData{crawl.timestamp}", BundleConfig())
    writer.append([replace(index_document(text_doc(url, url, body)), cached_page=b"x")
                   for url, body in pages])
    writer.refresh()
    if finished:
        writer.close()


def ended(make_crawl, work, **fields) -> Crawl:
    crawl = make_crawl(name="weekly", **fields)
    services.crawl_start(crawl.pk)
    bundle(work, crawl, [("https://old.example/a", "harbour lighthouse old")])
    Crawl.objects.filter(pk=crawl.pk).update(documents_indexed=1)
    services.crawl_finish(crawl.pk, analyse=False)
    crawl.refresh_from_db()
    return crawl


def urls(client, query: str) -> list[str]:
    return [r["url"] for r in client.get("/", {"q": query, "f": "json"}).json()["results"]]


def test_a_crawl_is_due_to_start_over_after_its_recrawl_days(make_crawl, work):
    crawl = ended(make_crawl, work, recrawl_days=2)
    never = ended(make_crawl, work, recrawl_days=-1)
    start = crawl.started_at
    assert services.crawl_repeats_due(DAY, start + timedelta(seconds=2 * DAY - 1)) == []
    assert services.crawl_repeats_due(DAY, start + timedelta(seconds=2 * DAY)) == [crawl.pk]
    assert never.pk not in services.crawl_repeats_due(DAY, start + timedelta(days=3650))
    Crawl.objects.filter(pk=crawl.pk).update(started_at=start - timedelta(seconds=2 * DAY))
    repeat = repeats.start_due_repeat()
    assert repeat.repeat_of == crawl and repeat.status == CrawlStatus.RUNNING
    assert repeat.name == crawl.name and repeat.recrawl_days == 2
    assert [s.url for s in repeat.seeds.all()] == [s.url for s in crawl.seeds.all()]
    assert repeat.timestamp != crawl.timestamp
    assert services.crawl_repeats_due(DAY, timezone.now() + timedelta(days=365)) == []
    with pytest.raises(services.CrawlServiceError):
        services.crawl_repeat(crawl.pk)      # repeated already


def test_search_answers_from_the_old_index_until_the_repeat_is_complete(
        client, make_crawl, work):
    crawl = ended(make_crawl, work, recrawl_days=1)
    mix = CrawlMix.objects.create(name="harbours", public=True)
    CrawlMixMember.objects.create(mix=mix, crawl=crawl, weight=1.0)
    assert not SearchIndex.objects.exists() or search_index_get().timestamps == (crawl.timestamp,)
    repeat = services.crawl_repeat(crawl.pk)
    # the repeat's index is half built: on disk and newer, never searched
    bundle(work, repeat, [("https://new.example/a", "harbour lighthouse new")], finished=False)
    assert urls(client, "harbour") == ["https://old.example/a"]
    assert client.get("/", {"q": "harbour", "f": "json", "mix": "harbours"}).json()[
        "results"][0]["url"] == "https://old.example/a"
    index_services.search_index_use("newest")
    assert urls(client, "harbour") == ["https://old.example/a"]
    index_services.search_index_use("crawl", crawl_id=crawl.pk)

    Crawl.objects.filter(pk=repeat.pk).update(documents_indexed=1)
    services.crawl_finish(repeat.pk, analyse=False)           # complete: the swap
    assert urls(client, "harbour") == ["https://new.example/a"]
    assert SearchIndex.objects.get().crawl_id == repeat.pk
    assert list(mix.members.values_list("crawl_id", flat=True)) == [repeat.pk]
    crawl.refresh_from_db()
    assert crawl.status == CrawlStatus.CLOSED and crawl.replaced_at is not None

    # the replaced crawl's files go after the grace period, the repeat's stay
    old_index = work / "qs0" / f"IndexData{crawl.timestamp}"
    assert repeats.remove_replaced(work / "qs0", 0) == [] and old_index.is_dir()
    later = timezone.now() + repeats.REPLACED_GRACE
    assert repeats.remove_replaced(work / "qs0", 0, later) == [crawl.timestamp]
    assert not old_index.exists()
    assert (work / "qs0" / f"IndexData{repeat.timestamp}").is_dir()
    assert urls(client, "harbour") == ["https://new.example/a"]


def test_without_a_choice_the_half_built_repeat_is_not_the_newest_index(
        client, make_crawl, work):
    crawl = ended(make_crawl, work, recrawl_days=1)
    SearchIndex.objects.all().delete()          # nothing chosen: the newest index on disk
    repeat = services.crawl_repeat(crawl.pk)
    bundle(work, repeat, [("https://new.example/a", "harbour lighthouse new")], finished=False)
    assert urls(client, "harbour") == ["https://old.example/a"]


def test_a_repeat_that_ends_empty_or_is_stopped_replaces_nothing(client, make_crawl, work):
    crawl = ended(make_crawl, work, recrawl_days=1)
    repeat = services.crawl_repeat(crawl.pk)
    services.crawl_stop(repeat.pk, analyse=False)      # stopped half-way: resumable
    assert urls(client, "harbour") == ["https://old.example/a"]
    services.crawl_resume(repeat.pk)
    services.crawl_finish(repeat.pk, analyse=False)    # ended with nothing indexed
    crawl.refresh_from_db()
    assert crawl.replaced_at is None and crawl.status == CrawlStatus.STOPPED
    assert urls(client, "harbour") == ["https://old.example/a"]
