"""Link analysis in the search page and API (issue 8): the crawl's scores file boosts results,
Page Options' link score weight (admin form, validators) sets or turns off the boost, and the
explanation shows it as its own line."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from crawler.models import PageOptions
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import write_scores
from ranking.search_service import search_service
from tests.unit.linkgraph.helpers import graph_of
from tests.unit.ranking.helpers import build, text_doc
from tests.web.forms import admin_change_data

ITS = 1000
PLAIN = "https://plain.example/widgets.html"
POPULAR = "https://popular.example/widgets.html"
BODY = "The widget frobnicator assembles widgets from parts and ships them daily."


@pytest.fixture
def work(tmp_path, settings, db):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    # PLAIN holds the query words more often, so it has the higher relevance on this tiny
    # index: first without link scores (proximity, which favours the shorter page, is left out)
    PageOptions.objects.filter(is_default=True).update(proximity_weight=0.0)
    build(tmp_path / "qs0" / f"IndexData{ITS}", [
        text_doc(PLAIN, "Widget frobnicator",
                 BODY + " Frobnicator widgets: widget frobnicator."),
        text_doc(POPULAR, "Widget frobnicator", BODY)]).close()
    fans = [f"https://fan{i}.example/" for i in range(10)]
    graph = graph_of([(f, POPULAR) for f in fans], nodes=[PLAIN])
    score = np.full(graph.n, 0.01)
    score[graph.node_id(POPULAR)] = 0.5
    write_scores(scores_path(tmp_path, ITS), graph.with_scores(score=score))
    yield tmp_path
    search_service().pool.close()


def _set_weight(value: float) -> None:
    PageOptions.objects.filter(is_default=True).update(link_score_weight=value)


def _urls(client, **params):
    data = client.get("/", {"q": "widget frobnicator", "f": "json", "explain": "1",
                            **params}).json()
    return [r["url"] for r in data["results"]], data


def test_api_results_boosted_and_explained(client, work):
    urls, data = _urls(client)
    assert urls[:2] == [POPULAR, PLAIN]
    link = data["results"][0]["explanation"]["link_score"]
    assert link["weight"] == PageOptions().link_score_weight and link["available"] is True
    assert link["value"] == pytest.approx(np.log10(1 + 0.5 * 12))  # 12 nodes in the graph


def test_weight_zero_in_page_options_turns_it_off(client, work):
    _set_weight(0.0)
    urls, data = _urls(client)
    assert urls[:2] == [PLAIN, POPULAR]
    assert data["results"][0]["explanation"]["link_score"]["value"] == 0.0


def test_search_page_shows_the_link_score_line(client, work):
    body = client.get("/", {"q": "widget frobnicator"}).content.decode()
    assert "Link score" in body and "LinkRank" in body


def test_missing_scores_file_still_searches(client, work):
    scores_path(work, ITS).unlink()
    urls, data = _urls(client)
    assert urls[:2] == [PLAIN, POPULAR]
    assert "note" in data["results"][0]["explanation"]["link_score"]


@pytest.mark.parametrize(("value", "message"), [
    ("-1", "Ensure this value is greater than or equal to 0.0"),
    ("101", "Ensure this value is less than or equal to 100.0"),
])
def test_admin_refuses_out_of_range_weight(admin_client, options, value, message):
    url = reverse("admin:crawler_pageoptions_change", args=[options.pk])
    data = admin_change_data(admin_client, url)
    data["link_score_weight"] = value
    response = admin_client.post(url, data)
    assert response.status_code == 200 and message in response.content.decode()
    options.refresh_from_db()
    assert options.link_score_weight == pytest.approx(PageOptions().link_score_weight)


def test_admin_saves_weight_and_search_options_follow(admin_client, options):
    from ranking.selectors import search_options_get

    url = reverse("admin:crawler_pageoptions_change", args=[options.pk])
    data = admin_change_data(admin_client, url)
    assert "link_score_weight" in data
    data["link_score_weight"] = "2.5"
    response = admin_client.post(url, data)
    assert response.status_code == 302
    options.refresh_from_db()
    assert options.link_score_weight == pytest.approx(2.5)
    assert search_options_get().link_score_weight == pytest.approx(2.5)
