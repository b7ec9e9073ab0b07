"""The agent API (issue 38, item 1) against a real index: a documentation site on loopback,
crawled by the engine's own crawler, searched through the MCP server (streamable HTTP, served
by uvicorn in this process, driven by the SDK's own client; and stdio, as a client starts it)
and through the JSON endpoints. Every passage's offsets point at exactly its text in the
cached copy's text."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import threading
import time
from typing import Any

import pytest
import uvicorn
from django.conf import settings as django_settings
from mcp import Client, StdioServerParameters

from ranking.agent.mcp_server import allowed_hosts, http_app, mcp_server
from ranking.agent.tools import agent_tools
from ranking.search_service import search_service
from tests.conftest import ROOT, free_port, sqlite_copy
from tests.web.agent_site import ITS, TWIN, crawled_site

pytestmark = pytest.mark.django_db(transaction=True)
TOOLS = {"search", "read", "cached", "context"}


@pytest.fixture(scope="module")
def site_work(tmp_path_factory):
    work = tmp_path_factory.mktemp("agent-work")
    with crawled_site(work) as server:
        yield work, server.url("/")


@pytest.fixture
def work(site_work, settings):
    settings.WORK_DIRECTORY, base = site_work
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    settings.SEARCH_OPTIONS_TTL = 0
    settings.AGENT_TOKEN = "agent-secret"
    yield base
    search_service().pool.close()


@pytest.fixture
def mcp_url(work):
    """The MCP server's streamable HTTP app on a free loopback port, in a thread."""
    port = free_port()
    app = http_app(mcp_server(agent_tools()), django_settings.AGENT_TOKEN, (),
                   allowed_hosts(django_settings.ALLOWED_HOSTS, "127.0.0.1"))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(timeout=10)


def call(url: str, steps):
    """Run ``steps(client)`` (a coroutine function) with an SDK client of ``url``."""
    async def run():
        async with Client(url) as client:
            return await steps(client)
    return asyncio.run(run())


async def tool(client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def tool_error(client, name: str, **arguments: Any) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error
    return " ".join(getattr(part, "text", "") for part in result.content)


def test_the_sdk_client_lists_searches_reads_and_packs_context(mcp_url, work):
    async def steps(client):
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        search_schema = next(t for t in listed if t.name == "search").input_schema
        assert {"query", "limit", "site", "language", "passages"} <= \
            set(search_schema["properties"])

        found = await tool(client, "search", query="zephyrine queue", limit=5, passages=2)
        assert found["crawl"] == ITS and found["results"]
        first = found["results"][0]
        assert first["url"] == work + "queues.html" and first["title"] == "Queues"
        assert re.fullmatch(rf"{ITS}-[0-9a-f]{{48}}", first["id"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", first["crawl_date"])
        assert first["passages"][0]["text"].startswith("A zephyrine queue holds tasks")
        assert first["passages"][0]["section"] == "Queues"
        assert all(r["id"] for r in found["results"])

        # every passage of every result is exactly its slice of the cached copy's text
        for result in found["results"]:
            cached = await tool(client, "cached", ref=result["id"])
            assert cached["crawl_date"] == result["crawl_date"]
            assert cached["source"] == ("md_twin" if result["url"].endswith("workers.html")
                                        else "cached")
            for p in result["passages"]:
                assert cached["text"][p["start"]:p["end"]] == p["text"]
        cached = await tool(client, "cached", ref=first["url"])  # by url: the same copy
        assert cached["id"] == first["id"] and "<h1>Queues</h1>" in cached["original"]
        assert "Home" not in cached["text"]  # the page's navigation is not its text

        # read pages through the same text; a section is read from its heading
        pages, start = [], 0
        while start is not None:
            page = await tool(client, "read", ref=first["id"], start=start, max_chars=60)
            assert page["start"] == start and len(page["text"]) <= 60
            pages.append(page["text"])
            start = page["next_start"]
        assert "".join(pages) == cached["text"] and len(pages) > 3
        retries = await tool(client, "read", ref=first["id"], section="retries")
        assert retries["text"].startswith("## Retries\n\n- A failed task is retried")
        assert [s["title"] for s in retries["sections"]] == ["Retries"]

        packed = await tool(client, "context", query="zephyrine worker", token_budget=120,
                            max_passages_per_url=1)
        assert 0 < packed["tokens_used"] <= 120
        urls = [p["url"] for p in packed["passages"]]
        assert len(urls) == len(set(urls)) and work + "workers.html" in urls
        for p in packed["passages"]:
            text = (await tool(client, "cached", ref=p["id"]))["text"]
            assert text[p["start"]:p["end"]] == p["text"] and p["crawl_date"]
    call(mcp_url, steps)


def test_offsets_count_characters_in_non_ascii_text(mcp_url, work):
    async def steps(client):
        found = await tool(client, "search", query="Fräulein Warteschlange", passages=3)
        result = found["results"][0]
        assert result["url"] == work + "unicode.html"
        text = (await tool(client, "cached", ref=result["id"]))["text"]
        assert result["passages"] and "🐝" in text
        for p in result["passages"]:
            assert text[p["start"]:p["end"]] == p["text"]
    call(mcp_url, steps)


def test_tool_errors_are_messages_not_crashes(mcp_url, work):
    async def steps(client):
        assert "between 1 and 50" in await tool_error(client, "search", query="queue", limit=51)
        assert "empty" in await tool_error(client, "search", query="   ")
        assert "language" in await tool_error(client, "search", query="q", language="<x>")
        assert "not in the index" in await tool_error(client, "read",
                                                      ref="http://nowhere.example/")
        assert "document id" in await tool_error(client, "read", ref="javascript:alert(1)")
        assert "no document" in await tool_error(client, "cached", ref=f"{ITS}-{'0' * 48}")
        assert "NOARCHIVE" in await tool_error(client, "read", ref=work + "secret.html")
        assert "no section" in await tool_error(client, "read", ref=work + "queues.html",
                                                section="nothing like it")
        # the session still answers
        assert (await tool(client, "search", query="zephyrine"))["results"]
    call(mcp_url, steps)


def test_remote_and_cross_origin_http_requests_are_refused(mcp_url, client):
    import requests  # the client a non-MCP caller would use

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    refused = requests.post(mcp_url, json=body, headers={**headers,
                                                         "Origin": "https://evil.example"},
                            timeout=10)
    assert refused.status_code == 403 and "origin" in refused.json()["error"]
    wrong = requests.post(mcp_url, json=body, headers={**headers,
                                                       "Authorization": "Bearer nope"},
                          timeout=10)
    assert wrong.status_code == 401


def test_json_endpoints_answer_the_same_tools(client, work):
    found = client.get("/api/agent/search", {"query": "zephyrine queue", "passages": "1"})
    assert found.status_code == 200
    first = found.json()["results"][0]
    assert first["url"] == work + "queues.html" and len(first["passages"]) == 1
    cached = client.post("/api/agent/cached", {"id": first["id"]},
                         content_type="application/json").json()
    p = first["passages"][0]
    assert cached["text"][p["start"]:p["end"]] == p["text"]
    read = client.get("/api/agent/read", {"url": first["url"], "max_chars": "20"}).json()
    assert read["text"] == cached["text"][:read["end"]] and read["next_start"] == read["end"]
    packed = client.get("/api/agent/context", {"query": "worker shutdown",
                                               "token_budget": "500"}).json()
    assert packed["passages"] and packed["tokens_used"] <= 500


@pytest.mark.parametrize("path, params, status", [
    ("/api/agent/search", {}, 400),
    ("/api/agent/search", {"query": "q", "limit": "ten"}, 400),
    ("/api/agent/search", {"query": "q", "passages": "-1"}, 400),
    ("/api/agent/search", {"query": "q", "site": "a b"}, 400),
    ("/api/agent/search", {"query": "q" * 5000}, 400),
    ("/api/agent/search", {"query": "q", "bogus": "1"}, 400),
    ("/api/agent/read", {"ref": "\x00"}, 400),
    ("/api/agent/read", {"ref": "http://nowhere.example/a"}, 404),
    ("/api/agent/read", {"ref": f"{ITS}-{'f' * 48}", "start": "99999999999"}, 404),
    ("/api/agent/read", {"ref": f"{ITS}-{'f' * 48}", "start": "9" * 30}, 400),
    ("/api/agent/read", {"url": "https://x.example/", "max_chars": "0"}, 400),
    ("/api/agent/cached", {"ref": "9" * 40 + "-" + "a" * 48}, 400),
    ("/api/agent/context", {"query": "q", "token_budget": "10"}, 400),
])
def test_json_endpoints_odd_input_is_a_4xx(client, work, path, params, status):
    assert client.get(path, params).status_code == status


def test_json_endpoints_refuse_bodies_origins_and_remote_clients(client, work):
    post = client.post("/api/agent/search", "[1, 2]", content_type="application/json")
    assert post.status_code == 400
    assert client.post("/api/agent/search", b"\xff", content_type="application/json"
                       ).status_code == 400
    assert client.put("/api/agent/search").status_code == 405
    evil = client.get("/api/agent/search", {"query": "q"}, HTTP_ORIGIN="https://evil.example")
    assert evil.status_code == 403
    remote = client.get("/api/agent/search", {"query": "zephyrine"}, REMOTE_ADDR="192.0.2.9")
    assert remote.status_code == 401
    token = client.get("/api/agent/search", {"query": "zephyrine"}, REMOTE_ADDR="192.0.2.9",
                       HTTP_AUTHORIZATION="Bearer agent-secret")
    assert token.status_code == 200 and token.json()["results"]


def test_stdio_transport(tmp_path, migrated_sqlite, work):
    """``manage.py run_mcp_server --stdio`` as a client starts it: tools listed, a search
    answered from the same index."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
                "VAR_DIRECTORY": str(tmp_path / "var"),
                "WORK_DIRECTORY": str(django_settings.WORK_DIRECTORY),
                "DATABASE_URL": sqlite_copy(migrated_sqlite, tmp_path)})
    params = StdioServerParameters(command=sys.executable,
                                   args=["manage.py", "run_mcp_server", "--stdio"],
                                   env=env, cwd=str(ROOT))

    async def steps(client):
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        return await tool(client, "search", query="zephyrine shutdown")

    async def run():
        async with Client(params) as client:
            return await steps(client)
    found = asyncio.run(run())
    assert found["results"][0]["url"] == work + "workers.html"


def test_llms_txt_of_a_crawled_site(client, work):
    """``/llms/<host>/llms.txt`` (issue 38, item 2): the site's indexed pages in the
    llms.txt format."""
    host = work.split("://", 1)[1].rstrip("/")
    answer = client.get(f"/llms/{host}/llms.txt")
    text = answer.content.decode()
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/markdown")
    lines = text.splitlines()
    assert lines[0] == f"# {host}" and lines[2].startswith(f"> The pages of {host}")
    assert "## Pages" in lines
    items = [line for line in lines if line.startswith("- [")]
    assert f"- [Queues]({work}queues.html): " in text
    assert any(line.startswith(f"- [Workers]({work}workers.html)") for line in items)
    assert len(items) == 6 and all(re.fullmatch(r"- \[[^\]]+\]\(http[^)\s]+\)(: .+)?", line)
                                   for line in items)
    assert client.get("/llms/nothing.example/llms.txt").status_code == 404
    assert client.get("/llms/bad host!/llms.txt").status_code == 400


def test_a_pages_markdown_twin_is_its_text(client, work):
    """A page whose site publishes a ``.md`` twin (issue 38, item 2) reads as the twin's
    Markdown, and its passages point into that text."""
    found = client.get("/api/agent/search", {"query": "zephyrine worker concurrency",
                                             "passages": "2"}).json()
    page = next(r for r in found["results"] if r["url"] == work + "workers.html")
    read = client.get("/api/agent/read", {"ref": page["id"]}).json()
    assert read["source"] == "md_twin" and read["text"] == TWIN.strip("\n")
    assert [s["title"] for s in read["sections"]] == ["Workers (Markdown)", "Stopping"]
    for p in page["passages"]:
        assert read["text"][p["start"]:p["end"]] == p["text"]
    queues = client.get("/api/agent/read", {"url": work + "queues.html"}).json()
    assert queues["source"] == "cached"  # no twin: the page's own copy
