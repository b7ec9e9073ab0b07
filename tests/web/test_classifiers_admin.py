"""The classifiers' admin through the Django test client: the pages, active learning, the
accuracy shown, versions, the threshold, the Page Options inline, and bad input (never a
server error)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from bench.topic_pages import topic_pages
from classifiers import selectors, services
from classifiers.core.apply import ClassifierRef
from classifiers.core.features import featurize, page_text
from classifiers.core.model import LinearModel
from classifiers.models import Classifier, ClassifierModel, ClassifierPage, ClassifierUse
from crawler import services as crawl_services
from crawler.models import Crawl, PageOptions
from ranking.selectors import search_options_get
from tests.web.forms import admin_change_data

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def work(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path / "work"  # no index: no crawl to choose


@pytest.fixture
def sports():
    classifier = Classifier.objects.create(label="sports")
    for rank, page in enumerate(topic_pages(0, 30, seed=5)):
        ClassifierPage.objects.create(
            classifier=classifier, url=f"https://example.com{page.path}", title=page.title,
            description=page.description, crawl_timestamp=1, query="newsletter", rank=rank)
    return classifier


def label_url(classifier) -> str:
    return reverse("admin:classifiers_classifier_label", args=[classifier.pk])


def shown_page(client, classifier) -> ClassifierPage:
    body = client.get(label_url(classifier)).content.decode()
    return ClassifierPage.objects.get(pk=int(re.search(r'data-page="(\d+)"', body).group(1)))


def label(client, classifier, page, answer: str):
    response = client.post(label_url(classifier), {"action": "label", "page": page.pk,
                                                   "answer": answer})
    assert response.status_code == 302
    return response


def test_pages_render(admin_client, sports, options):
    for url in (reverse("admin:classifiers_classifier_changelist"),
                reverse("admin:classifiers_classifier_add"),
                reverse("admin:classifiers_classifier_change", args=[sports.pk]),
                label_url(sports),
                reverse("admin:crawler_pageoptions_change", args=[options.pk])):
        assert admin_client.get(url).status_code == 200, url
    body = admin_client.get(label_url(sports)).content.decode()
    assert "No model yet" in body and "No crawl has an index to search yet" in body


def test_active_learning_order(admin_client, sports):
    # before a model: the query's order
    first = shown_page(admin_client, sports)
    assert first.rank == 0
    label(admin_client, sports, first, "yes" if "/sports/" in first.url else "no")
    second = shown_page(admin_client, sports)
    assert second.rank == 1  # one label: still no model
    label(admin_client, sports, second, "yes" if "/sports/" in second.url else "no")
    assert ClassifierPage.objects.filter(classifier=sports, label__isnull=False).count() == 2
    for _ in range(4):
        shown = shown_page(admin_client, sports)
        # the oracle: every unlabelled page scored by the stored model, the one nearest 0.5
        row = ClassifierModel.objects.get(classifier=sports)
        model = LinearModel.from_bytes(row.coefficients)
        left = list(ClassifierPage.objects.filter(classifier=sports, label__isnull=True))
        scores = model.scores(featurize([page_text(p.title, p.description) for p in left]))
        best = min(zip(left, scores.tolist(), strict=True),
                   key=lambda ps: (abs(ps[1] - 0.5), ps[0].rank))
        assert shown.pk == best[0].pk
        body = admin_client.get(label_url(sports)).content.decode()
        assert f'id="classifier-score">{best[1]:.3f}<' in body
        label(admin_client, sports, shown, "yes" if "/sports/" in shown.url else "no")


def test_accuracy_is_shown_with_the_count_of_labels(admin_client, sports):
    pages = list(ClassifierPage.objects.filter(classifier=sports).order_by("rank")[:6])
    for page in pages:
        label(admin_client, sports, page, "yes" if "/sports/" in page.url else "no")
    row = ClassifierModel.objects.get(classifier=sports)
    assert row.positives == 3 and row.negatives == 3 and row.folds == 3
    body = admin_client.get(label_url(sports)).content.decode()
    shown = re.sub(r"\s+", " ", body)
    assert (f"Cross-validated accuracy: <b>{row.accuracy:.3f}</b> (3-fold over 6 labelled "
            "pages: 3 yes, 3 no)") in shown
    changelist = admin_client.get(reverse("admin:classifiers_classifier_changelist"))
    assert f"{row.accuracy:.1%} (3-fold)" in changelist.content.decode()


def test_versions(admin_client, sports, make_crawl):
    pages = list(ClassifierPage.objects.filter(classifier=sports).order_by("rank"))
    response = admin_client.post(label_url(sports), {"action": "finish"}, follow=True)
    assert "nothing new to finish" in response.content.decode()  # no model yet
    for page in pages[:4]:
        label(admin_client, sports, page, "yes" if "/sports/" in page.url else "no")
    sports.refresh_from_db()
    assert sports.version == 0 and ClassifierModel.objects.get(classifier=sports).version == 1
    admin_client.post(label_url(sports), {"action": "finish"})
    sports.refresh_from_db()
    assert sports.version == 1
    first = bytes(ClassifierModel.objects.get(classifier=sports, version=1).coefficients)
    options = crawl_services.page_options_default_get()
    ClassifierUse.objects.create(page_options=options, classifier=sports)
    old = make_crawl(name="old")
    crawl_services.crawl_start(old.pk)
    old.refresh_from_db()
    assert [(c["label"], c["version"]) for c in old.page_options_snapshot["classifiers"]] == \
        [("sports", 1)]
    crawl_services.crawl_stop(old.pk, analyse=False)
    # more labels: a draft v2; v1 never changes
    label(admin_client, sports, pages[4], "yes" if "/sports/" in pages[4].url else "no")
    assert sorted(ClassifierModel.objects.filter(classifier=sports)
                  .values_list("version", flat=True)) == [1, 2]
    assert bytes(ClassifierModel.objects.get(classifier=sports, version=1).coefficients) == first
    body = admin_client.get(label_url(sports)).content.decode()
    assert "Crawls run version 1." in body and "Version 2 is trained and not finished." in body
    admin_client.post(label_url(sports), {"action": "finish"})
    sports.refresh_from_db()
    assert sports.version == 2
    # the old crawl still loads the version it recorded
    refs = [ClassifierRef.from_dict(c) for c in
            Crawl.objects.get(pk=old.pk).page_options_snapshot["classifiers"]]
    trained = selectors.trained_classifiers_get(refs)
    assert len(trained) == 1 and trained[0].model.to_bytes() == first
    # unlabelling below one of each removes the draft, never a finished version
    for page in pages[:5]:
        label(admin_client, sports, page, "clear")
    assert list(ClassifierModel.objects.filter(classifier=sports)
                .values_list("version", flat=True)) == [2, 1]


def test_threshold_decides_the_cross_validated_predictions(sports):
    pages = list(ClassifierPage.objects.filter(classifier=sports).order_by("rank")[:8])
    ClassifierPage.objects.filter(pk__in=[p.pk for p in pages]).update(label=False)
    ClassifierPage.objects.filter(pk__in=[p.pk for p in pages if "/sports/" in p.url]) \
        .update(label=True)
    Classifier.objects.filter(pk=sports.pk).update(threshold=0.0)  # every page "yes"
    row = services.classifier_train(sports.pk)
    assert row.accuracy == pytest.approx(row.positives / 8)
    Classifier.objects.filter(pk=sports.pk).update(threshold=1.0)  # every page "no"
    assert services.classifier_train(sports.pk).accuracy == pytest.approx(row.negatives / 8)


def test_page_options_inline_sets_the_rank_weight(admin_client, sports, options):
    url = reverse("admin:crawler_pageoptions_change", args=[options.pk])
    base = admin_change_data(admin_client, url)
    row = {"classifier_uses-TOTAL_FORMS": "1", "classifier_uses-0-classifier": sports.pk,
           "classifier_uses-0-rank_weight": "2.5"}
    for bad in ({"classifier_uses-0-rank_weight": "101"},
                {"classifier_uses-0-rank_weight": "zero"},
                {"classifier_uses-0-rank_weight": "0"},   # neither classify nor rank
                {"classifier_uses-0-classifier": "999999"}):
        response = admin_client.post(url, {**base, **row, **bad})
        assert response.status_code == 200 and not ClassifierUse.objects.exists(), bad
    response = admin_client.post(url, {**base, **row, "classifier_uses-0-classify": "on"})
    assert response.status_code == 302
    use = ClassifierUse.objects.get()
    assert (use.classify, use.rank_weight) == (True, 2.5)
    assert search_options_get().classifier_weights == ()  # not finished: no crawl runs it
    Classifier.objects.filter(pk=sports.pk).update(version=1)
    weights = search_options_get().classifier_weights
    assert len(weights) == sports.slot + 1 and weights[sports.slot] == 2.5
    assert sum(weights) == 2.5
    copy = crawl_services.page_options_copy(options.pk)
    assert ClassifierUse.objects.filter(page_options=copy, rank_weight=2.5).count() == 1


@pytest.mark.parametrize("data", [
    {"label": "Sports"}, {"label": "two words"}, {"label": "class:x"}, {"label": ""},
    {"label": "x" * 60}, {"label": "sports"},  # taken
    {"label": "ok", "threshold": "1.5"}, {"label": "ok", "threshold": "-0.1"},
    {"label": "ok", "threshold": "half"}, {"label": "ok", "threshold": "nan"},
])
def test_add_refuses_bad_input(admin_client, sports, data):
    response = admin_client.post(reverse("admin:classifiers_classifier_add"),
                                 {"description": "", "threshold": "0.5", **data})
    assert response.status_code == 200
    assert list(Classifier.objects.values_list("label", flat=True)) == ["sports"]


BAD_POSTS = [
    {}, {"action": "nonsense"}, {"action": "label"}, {"action": "label", "page": "abc"},
    {"action": "label", "page": "-1", "answer": "yes"},
    {"action": "label", "page": "999999", "answer": "yes"},
    {"action": "label", "page": "1", "answer": "maybe"},
    {"action": "label", "page": "1" * 40, "answer": "yes"},
    {"action": "find"}, {"action": "find", "crawl": "x", "query": "a", "count": "5"},
    {"action": "find", "crawl": "123", "query": "a", "count": "5"},
    {"action": "find", "crawl": "123", "query": "", "count": "0"},
    {"action": "find", "crawl": "123", "query": "q" * 10_000, "count": "1000"},
    {"action": "finish"},
]


@pytest.mark.parametrize("data", BAD_POSTS)
def test_label_page_bad_input_is_never_a_server_error(admin_client, sports, data):
    other = Classifier.objects.create(label="other")
    foreign = ClassifierPage.objects.create(classifier=other, url="https://x/", crawl_timestamp=1,
                                            query="q", rank=0)
    before = list(ClassifierPage.objects.values_list("pk", "label"))
    for posted in (data, {**data, "page": str(foreign.pk)} if "page" in data else data):
        response = admin_client.post(label_url(sports), posted)
        assert response.status_code in (200, 302), posted
    assert list(ClassifierPage.objects.values_list("pk", "label")) == before
    assert not ClassifierModel.objects.exists()
    sports.refresh_from_db()
    assert sports.version == 0


def test_missing_classifier_and_no_permission(client, admin_client, django_user_model, sports):
    assert admin_client.get(reverse("admin:classifiers_classifier_label", args=[999999])) \
        .status_code == 404
    viewer = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    client.force_login(viewer)
    assert client.get(label_url(sports)).status_code == 403
    assert client.post(label_url(sports), {"action": "finish"}).status_code == 403


def test_candidates_need_an_index(sports):
    with pytest.raises(services.ClassifierServiceError, match="No pages from crawl 123"):
        services.classifier_candidates_add(sports.pk, 123, "newsletter")
    for query, limit in (("  ", 5), ("a", 0), ("a", 201)):
        with pytest.raises(services.ClassifierServiceError):
            services.classifier_candidates_add(sports.pk, 123, query, limit)
    with pytest.raises(services.ClassifierServiceError, match="does not exist"):
        services.classifier_candidates_add(999999, 123, "a")
    assert PageOptions.objects.exists()
