"""The semantic signal end to end with the real model (the ``semantic`` extra): the
``embed_index`` command, the re-ranking of a search, the Similar pages, the fall-backs when a
crawl has no embeddings, and the model loading with no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from ranking.core.semantic.embedder import default_embedder
from ranking.core.semantic.store import load_semantic_index, semantic_dir
from ranking.search_service import search_service
from tests.fixtures.semantic_model import DEV_MODEL, DEV_MODEL_SETTING
from tests.fixtures.semantic_model import semantic_model_root as semantic_model_root  # fixture
from tests.web.semantic_site import (
    BIKE_PAGES,
    CONCEPT_QUERY,
    ITS,
    PAGES,
    RIGHT_PAGE,
    build_semantic_site,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def work(search_work, db, settings, semantic_model_root):
    settings.SEMANTIC_MODEL = DEV_MODEL_SETTING
    settings.SEMANTIC_MODEL_DIR = semantic_model_root
    search_service().forget_options()
    return search_work


def embedder(root):
    return default_embedder(root, DEV_MODEL)


@pytest.fixture
def bundle(work):
    return build_semantic_site(work)


@pytest.fixture
def embedded(bundle):
    out = StringIO()
    call_command("embed_index", "--crawl", str(ITS), stdout=out)
    return out.getvalue()


def urls_of(client, query, **params):
    response = client.get("/", {"q": query, "f": "json", "explain": "1", **params})
    assert response.status_code == 200
    return response.json()


def test_embed_index_stores_every_page_and_reuses_them(bundle, embedded, semantic_model_root):
    assert "8 pages with an embedding (8 embedded now" in embedded
    assert "ms a page" in embedded and str(semantic_dir(bundle)) in embedded
    index = load_semantic_index(semantic_dir(bundle))
    assert len(index) == len(PAGES) and index.model == embedder(semantic_model_root).name
    assert index.vectors.shape == (8, 384)
    norms = (index.vectors.astype("float32") ** 2).sum(axis=1)
    assert abs(float(norms.min()) - 1.0) < 0.01 and abs(float(norms.max()) - 1.0) < 0.01
    again = StringIO()
    call_command("embed_index", stdout=again)  # the newest crawl; nothing new to embed
    assert "(0 embedded now" in again.getvalue() and "8 kept" in again.getvalue()


def test_concept_query_moves_the_right_page_up(client, settings, embedded):
    off = [r["url"] for r in urls_of(client, CONCEPT_QUERY)["results"]]
    assert RIGHT_PAGE in off and off.index(RIGHT_PAGE) >= 2  # words favour the decoys
    settings.SEMANTIC_WEIGHT = 1.0
    search_service().forget_options()
    answer = urls_of(client, CONCEPT_QUERY)
    on = [r["url"] for r in answer["results"]]
    assert sorted(on) == sorted(off)  # re-ranked, nothing added or lost
    assert on[0] == RIGHT_PAGE
    first = answer["results"][0]["explanation"]["semantic"]
    assert first["semantic_rank"] == 1 and first["score_rank"] == off.index(RIGHT_PAGE) + 1
    assert first["similarity"] > max(r["explanation"]["semantic"]["similarity"]
                                     for r in answer["results"][1:])
    page = client.get("/", {"q": CONCEPT_QUERY}).content.decode()
    assert "<th scope=\"row\">Semantic</th>" in page


def test_signal_is_off_by_default(client, embedded):
    answer = urls_of(client, CONCEPT_QUERY)
    assert all("semantic" not in r["explanation"] for r in answer["results"])
    assert answer["results"][0]["url"] != RIGHT_PAGE


def test_similar_pages_are_the_nearest_by_embedding(client, embedded):
    response = client.get("/similar", {"url": RIGHT_PAGE, "f": "json"})
    assert response.status_code == 200
    found = response.json()["similar"]
    assert {p["url"] for p in found[:2]} == set(BIKE_PAGES)  # the other bicycle pages
    assert RIGHT_PAGE not in [p["url"] for p in found]
    assert found[0]["similarity"] >= found[-1]["similarity"]
    assert response.json()["fallback"] is None
    page = client.get("/similar", {"url": RIGHT_PAGE})
    html = page.content.decode()
    assert page.status_code == 200 and "Adjusting bicycle brakes" in html
    assert "/similar?url=http%3A%2F%2Fbikes.example.test%2Fbrakes.html" in html


def test_result_links_go_to_the_similar_pages(client, embedded):
    page = client.get("/", {"q": "bicycle"}).content.decode()
    assert 'href="/similar?url=http%3A%2F%2Fbikes.example.test' in page


def test_without_embeddings_search_and_similar_fall_back(client, settings, bundle):
    settings.SEMANTIC_WEIGHT = 1.0
    search_service().forget_options()
    answer = urls_of(client, CONCEPT_QUERY)
    assert answer["results"] and all("semantic" not in r["explanation"]
                                      for r in answer["results"])
    page = client.get("/", {"q": "bicycle"}).content.decode()
    assert "/similar?" not in page and 'class="similar-link"' in page  # the keyword search
    response = client.get("/similar", {"url": RIGHT_PAGE})
    assert response.status_code == 302 and response["Location"].startswith("/?q=")
    assert "bicycle" in response["Location"]
    data = client.get("/similar", {"url": RIGHT_PAGE, "f": "json"}).json()
    assert data["fallback"] == "keywords" and data["similar"] == []
    missing = client.get("/similar", {"url": "http://nowhere.example.test/"})
    assert missing.status_code == 404 and "not in the index" in missing.content.decode()
    assert client.get("/similar").status_code == 400


def test_damaged_embeddings_never_answer_5xx(client, settings, bundle, embedded):
    (semantic_dir(bundle) / "meta.json").write_text("{damaged")
    settings.SEMANTIC_WEIGHT = 1.0
    search_service().forget_options()
    assert urls_of(client, CONCEPT_QUERY)["results"]
    assert client.get("/similar", {"url": RIGHT_PAGE}).status_code == 302
    (semantic_dir(bundle) / "meta.json").unlink()
    assert client.get("/similar", {"url": RIGHT_PAGE, "f": "json"}).status_code == 200
    assert client.get("/similar", {"url": RIGHT_PAGE, "its": "42"}).status_code == 404


def test_the_model_loads_and_embeds_with_no_network(tmp_path, semantic_model_root):
    """In a network namespace of its own (no interface but a down loopback) and with the
    Hugging Face hub told to stay offline, the model still loads from the files fetched
    once, and gives the vectors it gives here."""
    script = ("import json, sys; from ranking.core.semantic.embedder import default_embedder; "
              "from tests.fixtures.semantic_model import DEV_MODEL; "
              f"v = default_embedder({str(semantic_model_root)!r}, DEV_MODEL)"
              ".embed(['fixing a flat tire']); "
              "print(json.dumps([round(float(x), 5) for x in v[0][:8]]))")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    done = subprocess.run(["unshare", "--net", sys.executable, "-c", script], env=env,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    offline = json.loads(done.stdout)
    here = embedder(semantic_model_root).embed(["fixing a flat tire"])[0][:8]
    assert offline == pytest.approx([float(x) for x in here], abs=1e-4)
    probe = subprocess.run(["unshare", "--net", sys.executable, "-c",
                            "import socket; s = socket.socket(); s.settimeout(2); "
                            "print(s.connect_ex(('127.0.0.1', 9)))"],
                           capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() != "0"  # nothing was reachable there
