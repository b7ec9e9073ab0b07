"""Issue 18: one corrupted stored summary costs only its own result. The index is written by
the engine's own writer (the fixture site of :mod:`tests.web.test_search_page`), then bytes
inside one page's gzip summary member in ``documents/partition_0.txt.gz`` are flipped (the
layout of :mod:`indexer.core.documents.store`), and the site is searched through the test client."""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from indexer.core.documents.store import PartitionDocumentBundle
from indexer.core.shard_token import shard_bearer
from tests.web.test_search_page import build_site_index
from tests.web.test_search_page import work as work  # the fixture, re-exported for pytest

DAMAGED = "http://docs.example.test/threads/3.html"
TOKEN = "corrupt-summary-token"


def corrupt_summary(bundle_path: Path, url: str, where: str) -> None:
    """Flip 8 bytes of the stored summary member of ``url``'s page document (the record that
    keeps a cached copy, not a link document with the same url)."""
    documents = PartitionDocumentBundle(bundle_path / "documents")
    blob = documents.blob_path(0)
    data = bytearray(blob.read_bytes())
    for record in documents.read_records(0):
        member = bytes(data[record.summary_offset:record.summary_offset + record.summary_length])
        if json.loads(gzip.decompress(member)).get("url") == url and record.cache_length > 0:
            break
    else:
        raise AssertionError(f"no page record of {url}")
    at = record.summary_offset + (12 if where == "head" else record.summary_length // 2)
    for i in range(at, at + 8):
        data[i] ^= 0xFF
    blob.write_bytes(bytes(data))


@pytest.fixture(params=["head", "middle"])
def damaged(work, request, settings):
    settings.QUEUE_SERVER_TOKEN = TOKEN
    corrupt_summary(build_site_index(work), DAMAGED, request.param)
    return work


def _no_server_path(response, work: Path) -> str:
    body = response.content.decode()
    assert str(work) not in body and "/tmp/" not in body, body[:500]
    return body


def test_search_shows_the_other_results(client, damaged):
    data = client.get("/", {"q": "locks", "num": "50", "f": "json"})
    assert data.status_code == 200
    _no_server_path(data, damaged)
    urls = [r["url"] for r in data.json()["results"]]
    assert len(urls) >= 20 and "http://docs.example.test/threads/1.html" in urls
    assert all(r["snippet"] for r in data.json()["results"] if r["url"] != DAMAGED)
    page = client.get("/", {"q": "threading"})
    assert page.status_code == 200
    body = _no_server_path(page, damaged)
    assert 'id="result-stats"' in body and body.count("threads/") >= 5
    rss = client.get("/", {"q": "threading", "f": "rss"})
    assert rss.status_code == 200
    assert len(ET.fromstring(rss.content).findall("./channel/item")) >= 5
    _no_server_path(rss, damaged)


def test_cache_of_the_damaged_page_is_gone_not_an_error(client, damaged):
    response = client.get("/cache", {"url": DAMAGED, "q": "locks"})
    assert response.status_code == 410
    body = _no_server_path(response, damaged)
    assert "damaged" in body
    frame = client.get("/cache/frame", {"url": DAMAGED})
    assert frame.status_code == 404
    _no_server_path(frame, damaged)
    fine = client.get("/cache", {"url": "http://docs.example.test/threads/4.html"})
    assert fine.status_code == 200


def test_suggestions_and_shard_api_survive(client, damaged):
    suggest = client.get("/suggest", {"q": "threa"})
    assert suggest.status_code == 200 and suggest.json()["suggestions"]
    shard = client.get("/api/shard/search", {"q": "locks", "heads": "30"},
                       HTTP_X_SHARD_TOKEN=shard_bearer(TOKEN))
    assert shard.status_code in (200, 404)
    _no_server_path(shard, damaged)
