"""The queue server's side of a link analysis computed elsewhere (linkgraph.views: its link
records out, the scores file in, both behind the shard token), and search picking up a new
scores file in the same process, without a restart and without a log line while it is
missing."""

from __future__ import annotations

import io
import logging

import numpy as np
import pytest

from indexer.core.runtime.workdir import scores_path
from indexer.core.shard_token import shard_bearer
from indexer.core.signals.link_scores import LinkScores, write_scores
from linkgraph.core.bundles import read_shard_links
from linkgraph.core.transfer import decode_shard_links
from ranking.search_service import search_service
from tests.unit.linkgraph.helpers import graph_of, write_bundle
from tests.unit.ranking.helpers import build, text_doc

TS = 4000
PAGES = [("https://a.org/", '<title>A</title><p>Alpha.</p><a href="https://b.org/">Bee</a>'),
         ("https://b.org/", '<title>B</title><p>Beta.</p><a href="https://a.org/">Ay</a>')]


@pytest.fixture
def shard(settings, tmp_path):
    settings.WORK_DIRECTORY = tmp_path
    settings.QUEUE_SERVER_TOKEN = "shard-secret"
    return write_bundle(tmp_path / "qs1" / f"IndexData{TS}", PAGES)


def _token(value="shard-secret"):
    return {"X-Shard-Token": shard_bearer(value)}


def test_links_endpoint_streams_the_shard(client, shard):
    response = client.get("/api/shard/links", {"crawl": TS, "server": 1}, headers=_token())
    assert response.status_code == 200 and response.streaming
    got = decode_shard_links(io.BytesIO(b"".join(response.streaming_content)), TS)
    assert got.pages == read_shard_links(shard).pages and got.documents > 0


@pytest.mark.parametrize(("params", "headers", "status", "message"), [
    ({"crawl": TS, "server": 1}, {}, 403, "shard token"),
    ({"crawl": TS, "server": 1}, {"X-Shard-Token": "wrong"}, 403, "shard token"),
    ({"crawl": "x", "server": 1}, _token(), 400, "crawl must be an integer"),
    ({"crawl": TS}, _token(), 400, "server must be an integer"),
    ({"crawl": TS, "server": 5000}, _token(), 400, "between 0 and 1023"),
    ({"crawl": TS, "server": 0}, _token(), 404, "no index of crawl"),
    ({"crawl": 1, "server": 1}, _token(), 404, "no index of crawl"),
])
def test_links_endpoint_refuses_bad_requests(client, shard, params, headers, status, message):
    response = client.get("/api/shard/links", params, headers=headers)
    assert response.status_code == status and message in response.json()["error"]


def _scores_file(tmp_path, value: float, crawl: int = TS) -> bytes:
    graph = graph_of([("https://a.org/", "https://b.org/")])
    score = np.full(2, 1.0 - value)
    score[graph.node_id("https://b.org/")] = value
    path = tmp_path / f"sent-{value}.npz"
    write_scores(path, graph.with_scores(score=score), {"crawl": crawl})
    return path.read_bytes()


def _post(client, body: bytes, crawl=TS, token="shard-secret"):
    return client.generic("POST", f"/api/shard/scores?crawl={crawl}", body,
                          content_type="application/octet-stream",
                          headers={"X-Shard-Token": shard_bearer(token)})


def test_scores_endpoint_installs_a_checked_file(client, shard, tmp_path):
    body = _scores_file(tmp_path, 0.8)
    response = _post(client, body)
    assert response.status_code == 200 and response.json() == {"ok": True, "crawl": TS,
                                                               "urls": 2}
    installed = scores_path(tmp_path, TS)
    assert installed.read_bytes() == body
    assert LinkScores(installed).score_of("https://b.org/", "linkrank") == 0.8
    # refusals leave the installed file as it was
    assert _post(client, body, token="wrong").status_code == 403
    bad = _post(client, b"not a scores file at all")
    assert bad.status_code == 400 and "not a usable scores file" in bad.json()["error"]
    foreign = _post(client, _scores_file(tmp_path, 0.3, crawl=TS + 1))
    assert foreign.status_code == 400 and f"crawl {TS + 1}" in foreign.json()["error"]
    assert _post(client, body, crawl="../../etc").status_code == 400
    assert _post(client, b"").status_code in (411, 413)  # no body: no length, or 0
    assert client.put(f"/api/shard/scores?crawl={TS}", headers=_token()).status_code == 405
    assert installed.read_bytes() == body


def test_scores_endpoint_sends_the_file_to_a_fetcher_machine(client, shard, tmp_path):
    """What a fetcher on a machine without a queue server fetches (#35 item 2)."""
    missing = client.get("/api/shard/scores", {"crawl": TS}, headers=_token())
    assert missing.status_code == 404 and "no link scores" in missing.json()["error"]
    body = _scores_file(tmp_path, 0.6)
    assert _post(client, body).status_code == 200
    sent = client.get("/api/shard/scores", {"crawl": TS}, headers=_token())
    assert sent.status_code == 200 and b"".join(sent.streaming_content) == body
    assert int(sent["Content-Length"]) == len(body)
    assert client.get("/api/shard/scores", {"crawl": TS}).status_code == 403
    assert client.get("/api/shard/scores", {"crawl": TS},
                      headers=_token("wrong")).status_code == 403
    assert client.get("/api/shard/scores", {"crawl": "../x"}, headers=_token()).status_code == 400


@pytest.fixture
def searchable(settings, tmp_path, db):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    build(tmp_path / "qs0" / f"IndexData{TS}", [
        text_doc("https://a.org/", "Widget frobnicator", "The widget frobnicator works."),
        text_doc("https://b.org/", "Widget frobnicator", "The widget frobnicator ships.")
    ]).close()
    yield tmp_path
    search_service().pool.close()


def _link_scores(client) -> dict[str, float]:
    data = client.get("/", {"q": "widget frobnicator", "f": "json", "explain": "1"}).json()
    return {r["url"]: r["explanation"]["link_score"]["value"] for r in data["results"]}


def test_search_picks_up_new_scores_without_a_restart(client, searchable, caplog):
    with caplog.at_level(logging.DEBUG, logger="indexer.core.signals.link_scores"):
        for _ in range(3):  # no scores yet: normal, and not one warning per search
            assert set(_link_scores(client).values()) == {0.0}
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    path = scores_path(searchable, TS)
    path.parent.mkdir(parents=True)
    path.write_bytes(_scores_file(searchable, 0.5))
    first = _link_scores(client)["https://b.org/"]
    assert first > 0
    path.write_bytes(_scores_file(searchable, 0.9))  # the next run's file, same process
    second = _link_scores(client)["https://b.org/"]
    assert second > first
