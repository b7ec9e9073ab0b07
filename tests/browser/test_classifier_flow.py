"""Classifiers in Chromium (issue 22, acceptance): crawl a fixture site of two topics (the
fixture index), make a classifier "sports" in the admin, find its candidate pages with a
query, label them yes or no as they come (the least certain first), see the cross-validated
accuracy, finish it, turn it on in the default Page Options, start a crawl of unseen pages
(``manage.py crawl``, as the other browser tests start theirs: the admin's Start needs
running fetcher workers) and find ``class:sports`` results on the search page.
Screenshots go to YIOOPY_SCREENSHOTS when it is set, else to the test's tmp_path."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.core.management import call_command
from django.urls import reverse

from bench.topic_pages import topic_pages
from classifiers.models import Classifier, ClassifierUse
from crawler.models import Crawl, PageOptions
from ranking.search_service import search_service
from tests.browser.helpers import wait_for
from tests.fixtures.sites import FixtureServer
from tests.fixtures.topic_site import COMMON_WORD, topic_site

pytestmark = pytest.mark.django_db(transaction=True)
LABELS = 16


def screenshot(browser, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("YIOOPY_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(folder / f"{name}.png"))


def crawl(pages) -> Crawl:
    with FixtureServer(topic_site(pages)) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "90", "--fetchers", "2",
                     "--no-link-analysis")
    return Crawl.objects.order_by("-timestamp").first()


@pytest.fixture
def fixture_index(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path / "work"
    settings.INDEX_REFRESH_SECONDS = 0.0
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().pool.close()
    search_service().lexicons.clear()
    yield crawl(topic_pages(0, 40, seed=1))
    search_service().pool.close()
    search_service().lexicons.clear()


def make_classifier(browser, live_server) -> Classifier:
    from selenium.webdriver.common.by import By

    browser.get(live_server.url + reverse("admin:classifiers_classifier_add"))
    browser.find_element(By.NAME, "label").send_keys("sports")
    browser.find_element(By.NAME, "_save").click()
    assert wait_for(lambda: Classifier.objects.filter(label="sports").exists())
    return Classifier.objects.get(label="sports")


def find_candidates(browser, timestamp: int) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.NAME, "crawl")).select_by_value(str(timestamp))
    browser.find_element(By.NAME, "query").send_keys(COMMON_WORD)
    count = browser.find_element(By.NAME, "count")
    count.clear()
    count.send_keys("40")
    browser.find_element(By.CSS_SELECTOR, "#classifier-find input[type=submit]").click()
    assert wait_for(lambda: browser.find_elements(By.ID, "classifier-next"), 30)


def label_pages(browser, count: int) -> None:
    """Answer each page shown by its url's topic (what a person reading it would say)."""
    from selenium.webdriver.common.by import By

    for _ in range(count):
        shown = browser.find_element(By.ID, "classifier-next")
        page = shown.get_attribute("data-page")
        url = shown.find_element(By.CSS_SELECTOR, "a").get_attribute("href")
        browser.find_element(By.ID, "label-yes" if "/sports/" in url else "label-no").click()
        assert wait_for(lambda shown=page: browser.find_element(By.ID, "classifier-next")
                        .get_attribute("data-page") != shown, 30)


def use_in_page_options(browser, live_server, classifier: Classifier) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    options = PageOptions.objects.get(is_default=True)
    browser.get(live_server.url + reverse("admin:crawler_pageoptions_change",
                                          args=[options.pk]))
    browser.find_element(By.CSS_SELECTOR, "#classifier_uses-group .add-row a").click()
    Select(browser.find_element(By.NAME, "classifier_uses-0-classifier")) \
        .select_by_value(str(classifier.pk))
    weight = browser.find_element(By.NAME, "classifier_uses-0-rank_weight")
    weight.clear()
    weight.send_keys("1")
    browser.find_element(By.NAME, "_save").click()
    assert wait_for(lambda: ClassifierUse.objects.filter(page_options=options).exists(), 30)


def test_label_train_finish_crawl_and_search(admin_browser, live_server, fixture_index,
                                             tmp_path):
    from selenium.webdriver.common.by import By

    browser = admin_browser
    classifier = make_classifier(browser, live_server)
    browser.get(live_server.url + reverse("admin:classifiers_classifier_label",
                                          args=[classifier.pk]))
    find_candidates(browser, fixture_index.timestamp)
    label_pages(browser, LABELS)
    accuracy = browser.find_element(By.ID, "classifier-accuracy").text
    assert "Cross-validated accuracy" in accuracy and f"{LABELS} labelled pages" in accuracy
    screenshot(browser, "classifier-labelling", tmp_path)
    browser.find_element(By.CSS_SELECTOR, "#classifier-finish input[type=submit]").click()
    assert wait_for(lambda: "Crawls run version 1." in
                    browser.find_element(By.ID, "classifier-version").text, 30)
    use_in_page_options(browser, live_server, classifier)

    second = crawl(topic_pages(0, 40, seed=3))  # unseen pages
    assert [(c["label"], c["version"]) for c in second.page_options_snapshot["classifiers"]] \
        == [("sports", 1)]
    browser.get(live_server.url + "/?" + urlencode({"q": "class:sports",
                                                   "its": second.timestamp, "num": 50}))
    assert wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "li.result"), 30)
    urls = [a.get_attribute("href") for a in
            browser.find_elements(By.CSS_SELECTOR, "li.result h2 a, li.result a.title")]
    screenshot(browser, "classifier-search", tmp_path)
    on_topic = [u for u in urls if "/sports/" in u]
    assert len(on_topic) >= 12 and len(urls) - len(on_topic) <= 2, urls
