"""A classifier from labels to search: crawl a fixture site of two topics, find its pages by a
query, label them in active-learning order, finish the model, crawl a second site of unseen
pages with the classifier on, then find its pages with ``class:sports`` and see its scores
weigh in the ranking when Page Options give it a rank weight."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from bench.topic_pages import topic_pages
from classifiers import selectors, services
from classifiers.models import Classifier, ClassifierUse
from crawler import services as crawl_services
from crawler.models import Crawl
from ranking.search_service import search_service
from ranking.selectors import search_options_get
from tests.fixtures.sites import FixtureServer
from tests.fixtures.topic_site import COMMON_WORD, topic_site

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
LABELS = 20


@pytest.fixture
def work(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path / "work"
    settings.INDEX_REFRESH_SECONDS = 0.0
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    service = search_service()
    service.pool.close()
    service.lexicons.clear()
    yield settings.WORK_DIRECTORY
    service.pool.close()
    service.lexicons.clear()


def crawl(pages) -> Crawl:
    with FixtureServer(topic_site(pages)) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "90", "--fetchers", "2",
                     "--no-link-analysis")
    return Crawl.objects.order_by("-timestamp").first()


def search(timestamp: int, query: str, num: int = 60):
    service = search_service()
    _, shards = service.shards(timestamp, staff=True)  # any crawl, as the admin
    return service.searcher(shards, search_options_get()).search(query, num=num,
                                                                  safe_search=False)


def test_label_train_crawl_and_search_class(work):
    first = crawl(topic_pages(0, 40, seed=1))
    sports = Classifier.objects.create(label="sports")
    added, had = services.classifier_candidates_add(sports.pk, first.timestamp, COMMON_WORD, 60)
    assert added == 40 and had == 0
    for _ in range(LABELS):  # label the page the model is least sure of, as the admin does
        page, _ = selectors.classifier_next_page(sports)
        services.classifier_label(sports.pk, page.pk, "/sports/" in page.url)
    status = selectors.classifier_status(sports)
    assert status.labelled == LABELS and status.model.accuracy is not None
    assert services.classifier_finish(sports.pk) == 1
    options = crawl_services.page_options_default_get()
    use = ClassifierUse.objects.create(page_options=options, classifier=sports, classify=True)

    second = crawl(topic_pages(0, 40, seed=3))
    recorded = second.page_options_snapshot["classifiers"]
    assert [(c["label"], c["version"]) for c in recorded] == [("sports", 1)]
    found = [r.url for r in search(second.timestamp, "class:sports").results]
    on_topic = [u for u in found if "/sports/" in u]
    # unseen pages: most sports pages found, hardly any cooking page
    assert len(on_topic) >= 16 and len(found) - len(on_topic) <= 2, found
    assert search(first.timestamp, "class:sports").results == ()  # crawled before: no class

    # as a rank score: weight 0 adds nothing; weight 3 adds 3 x the page's stored score
    plain = search(second.timestamp, COMMON_WORD)
    assert all(r.explanation["bonuses"]["classifier"] == 0.0 for r in plain.results)
    use.rank_weight = 3.0
    use.save()
    ranked = search(second.timestamp, COMMON_WORD)
    bonus = {r.url: r.explanation["bonuses"]["classifier"] for r in ranked.results}
    in_class = set(found)
    for url, value in bonus.items():
        if "/sports/" in url or "/cooking/" in url:
            assert 0.0 < value < 3.0
            assert (value / 3.0 >= sports.threshold) == (url in in_class), url
    top = [r.url for r in ranked.results[:10]]
    assert sum("/sports/" in u for u in top) >= 8, top
