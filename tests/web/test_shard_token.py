"""The shard API (search, summaries, link records, scores) takes the shared token in its header
only: a token in the url would be written to every access log on its way, so a request that
carries one there is refused with a clear JSON error, even with the right header."""

from __future__ import annotations

import pytest

from indexer.core.shard_token import shard_bearer
from ranking.search_service import search_service
from tests.web.test_search_api import make_index

TOKEN = "header-only-token"
HEADER = {"X-Shard-Token": shard_bearer(TOKEN)}


@pytest.fixture
def work(tmp_path, settings, db):
    settings.WORK_DIRECTORY = tmp_path
    settings.QUEUE_SERVER_TOKEN = TOKEN
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    make_index(tmp_path)
    yield tmp_path
    search_service().pool.close()


ENDPOINTS = [("GET", "/api/shard/search", {"q": "threading"}),
             ("GET", "/api/shard/summaries", {"ids": "00"}),
             ("GET", "/api/shard/links", {"crawl": "1000", "server": "0"}),
             ("POST", "/api/shard/scores", {"crawl": "1000"})]


def _ask(client, method, path, params, headers):
    if method == "GET":
        return client.get(path, params, headers=headers)
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return client.generic("POST", f"{path}?{query}", b"x",
                          content_type="application/octet-stream", headers=headers)


@pytest.mark.parametrize(("method", "path", "params"), ENDPOINTS)
def test_a_token_in_the_url_is_refused_even_with_the_header(client, work, method, path,
                                                             params):
    for headers in ({}, HEADER):
        response = _ask(client, method, path, {**params, "token": TOKEN}, headers)
        assert response.status_code == 403
        error = response.json()["error"]
        assert "only in the X-Shard-Token header" in error and "access logs" in error
        assert TOKEN not in error


def test_the_token_in_the_header_is_accepted(client, work):
    ok = client.get("/api/shard/search", {"q": "threading"}, headers=HEADER)
    assert ok.status_code == 200 and ok.json()["candidates"]
    wrong = client.get("/api/shard/search", {"q": "threading"},
                       headers={"X-Shard-Token": "nope"})
    assert wrong.status_code == 403 and wrong.json() == {"error": "missing or wrong shard token"}
