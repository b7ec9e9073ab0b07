"""The public search API (GET /?q=&f=json) and the shard endpoint, through the test client."""

from __future__ import annotations

import pytest

from indexer.core.shard_token import shard_bearer
from ranking.core.shard.candidates import Candidates
from ranking.search_service import search_service
from tests.unit.ranking.helpers import build, text_doc

TOKEN = "test-shard-token"


@pytest.fixture
def work(tmp_path, settings, db):
    settings.WORK_DIRECTORY = tmp_path
    settings.QUEUE_SERVER_TOKEN = TOKEN
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    yield tmp_path
    search_service().pool.close()


def make_index(work, server=0, its=1000, pages=()):
    pages = pages or [
        text_doc("https://docs.python.org/3/library/threading.html",
                 "threading - Thread-based parallelism",
                 "Higher-level threading interfaces. <script>alert(1)</script>"),
        text_doc("https://docs.python.org/3/library/queue.html", "queue",
                 "A synchronized queue class for threaded programming."),
    ]
    reader = build(work / f"qs{server}" / f"IndexData{its}", pages)
    reader.close()


def test_json_results(client, work):
    make_index(work)
    data = client.get("/", {"q": "threading", "f": "json"}).json()
    assert data["results"][0]["url"] == "https://docs.python.org/3/library/threading.html"
    first = data["results"][0]
    assert set(first) == {"url", "title", "title_html", "snippet", "score"}
    assert "&lt;script&gt;" in first["snippet"] or "<b>" in first["snippet"]
    assert data["total"] >= 1 and data["partial"] is False and data["query"] == "threading"
    assert isinstance(data["time"], float)


def test_json_titles_are_plain_text_and_explanations_come_on_request(client, work):
    # issue 39, item 10: JSON titles carried <b> tags and every result the score's 2 KB
    # explanation; the highlighted title is title_html now, the explanation needs explain=1
    make_index(work, pages=[text_doc("https://t.test/a", "Threading & <locks> explained",
                                     "threading with locks")])
    data = client.get("/", {"q": "threading", "f": "json"}).json()
    first = data["results"][0]
    assert first["title"] == "Threading & <locks> explained"
    assert first["title_html"] == "<b>Threading</b> &amp; &lt;locks&gt; explained"
    assert "explanation" not in first
    explained = client.get("/", {"q": "threading", "f": "json", "explain": "1"}).json()
    assert explained["results"][0]["explanation"]["relevance"]
    assert explained["results"][0]["title"] == first["title"]


def test_num_limit_and_its(client, admin_client, work):
    make_index(work, its=1000)
    make_index(work, its=2000, pages=[text_doc("https://new.test/a", "threading new", "x")])
    newest = client.get("/", {"q": "threading", "f": "json"}).json()
    assert [r["url"] for r in newest["results"]] == ["https://new.test/a"]
    # no crawl row names these indexes: only staff users may search them by timestamp
    old = admin_client.get("/", {"q": "thread", "f": "json", "its": "1000", "num": "1",
                                 "limit": "1"}).json()
    assert len(old["results"]) == 1
    missing = admin_client.get("/", {"q": "thread", "f": "json", "its": "3"}).json()
    assert missing["results"] == [] and "no index for crawl 3" in missing["messages"][0]


def test_several_queue_servers_merge(client, work):
    make_index(work, server=0, pages=[text_doc("https://a.test/x", "alpha", "alpha one")])
    make_index(work, server=1, pages=[text_doc("https://b.test/y", "alpha", "alpha two")])
    data = client.get("/", {"q": "alpha", "f": "json"}).json()
    assert {r["url"] for r in data["results"]} == {"https://a.test/x", "https://b.test/y"}


def test_no_index_and_bad_input_are_messages(client, work):
    data = client.get("/", {"q": "anything", "f": "json"}).json()
    assert data["results"] == [] and "no index" in data["messages"][0]
    make_index(work)
    for params in ({"q": '"unbalanced', "f": "json"}, {"q": "no:wat x", "f": "json"},
                   {"q": "", "f": "json"}, {"q": "x", "f": "json", "num": "many"}):
        response = client.get("/", params)
        assert response.status_code == 200
        assert response.json()["messages"]


def test_html_page_renders(client, work):
    make_index(work)
    assert client.get("/", {"q": "threading"}).status_code == 200
    assert client.get("/").status_code == 200


def test_shard_endpoint_requires_token(client, work):
    make_index(work)
    assert client.get("/api/shard/search", {"q": "threading"}).status_code == 403
    assert client.get("/api/shard/search", {"q": "threading", "token": "no"}).status_code == 403
    ok = client.get("/api/shard/search", {"q": "threading", "n": "5"},
                    HTTP_X_SHARD_TOKEN=shard_bearer(TOKEN))
    assert ok.status_code == 200
    cands = Candidates.from_json(ok.json()["candidates"], "shard")
    assert list(cands.terms) == ["thread"] and len(cands.doc_rank) == 2
    assert client.get("/api/shard/summaries", {"ids": "00"}).status_code == 403
