"""Link analysis in ranking (issue 8): the LinkRank + trust boost beside Doc Rank, its Page
Options weight, its line in the explanation, representative urls of redirects, and search
going on without the boost when the crawl's scores file is missing or corrupt."""

from __future__ import annotations

import logging
import os
from dataclasses import replace

import numpy as np
import pytest

from indexer.core.ids import DocType
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import LinkScores, cached_link_scores, write_scores
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from ranking.page import explanation_rows

from ..linkgraph.helpers import graph_of
from .helpers import Doc, build, text_doc

TS = 1_700_000_123
PLAIN = "https://plain.example/widgets.html"
POPULAR = "https://popular.example/widgets.html"
ALIAS = "https://popular.example/old/widgets.html"  # redirects to POPULAR
BODY = "The widget frobnicator assembles widgets from parts and ships them daily."
# the link score's effect alone: proximity (which favours the shorter page here) left out
OPTIONS = SearchOptions(proximity_weight=0.0)


def _bundle(work, docs):
    return build(work / "qs0" / f"IndexData{TS}", docs)


def _docs(with_redirect: bool = False) -> list[Doc]:
    # same url depth and query words; PLAIN holds the query words more often, so it has the
    # higher relevance and (proximity aside, see OPTIONS) it is first without link scores
    docs = [text_doc(PLAIN, "Widget frobnicator",
                     BODY + " Frobnicator widgets: widget frobnicator."),
            text_doc(POPULAR, "Widget frobnicator", BODY)]
    if with_redirect:
        docs.append(Doc(ALIAS, ("moved",), meta=(f"location:{POPULAR}",),
                        doc_type=DocType.LOCATION,
                        summary={"url": ALIAS, "title": "", "description": "",
                                 "location": POPULAR, "robot_metas": []}))
    return docs


def _write_scores(work, alias_score: float = 0.0):
    """A web where ten pages link to POPULAR (and ALIAS has ``alias_score``)."""
    fans = [f"https://fan{i}.example/" for i in range(10)]
    graph = graph_of([(f, POPULAR) for f in fans], nodes=[PLAIN, ALIAS])
    score = np.full(graph.n, 0.01)
    score[graph.node_id(POPULAR)] = 0.5
    score[graph.node_id(PLAIN)] = 0.01
    score[graph.node_id(ALIAS)] = alias_score
    trust = np.zeros(graph.n)
    trust[graph.node_id(POPULAR)] = 0.25
    path = write_scores(scores_path(work, TS), graph.with_scores(score=score, trust=trust))
    return LinkScores(path), graph.n


def _urls(result):
    return [r.url for r in result.results]


def test_boost_reorders_and_is_explained(tmp_path):
    reader = _bundle(tmp_path, _docs())
    scores, n = _write_scores(tmp_path)
    off = Searcher([LocalShard(reader)], replace(OPTIONS, link_score_weight=0.0))
    assert _urls(off.search("widget frobnicator"))[:2] == [PLAIN, POPULAR]
    on = Searcher([LocalShard(reader)], OPTIONS)  # scores found from where the bundle is
    res = on.search("widget frobnicator")
    assert _urls(res)[:2] == [POPULAR, PLAIN]
    exp = res.results[0].explanation
    link = exp["link_score"]
    relative = 0.5 * n
    assert link["linkrank_relative"] == pytest.approx(relative)
    assert link["trust"] == pytest.approx(0.25)
    assert link["value"] == pytest.approx(np.log10(1 + relative) + 0.25)
    assert link["weight"] == SearchOptions().link_score_weight and link["available"] is True
    total = (exp["doc_rank"]["value"] * exp["doc_rank"]["weight"]
             + exp["relevance"]["value"] * exp["relevance"]["weight"]
             + exp["proximity"]["value"] * exp["proximity"]["weight"]
             + link["value"] * link["weight"] + exp["bonuses"]["total"])
    assert exp["score"] == pytest.approx(total)
    # the page's explanation shows it as its own line
    rows = dict(explanation_rows(exp)[0])
    assert rows["Link score"].startswith(
        f"{link['value']:.4g} × weight {SearchOptions().link_score_weight:.4g}")
    assert "LinkRank" in rows["Link score"]
    # the weight scales it
    heavy = Searcher([LocalShard(reader)], replace(OPTIONS, link_score_weight=3.0))
    hexp = heavy.search("widget frobnicator").results[0].explanation
    assert hexp["score"] - exp["score"] == pytest.approx(
        (3.0 - SearchOptions().link_score_weight) * link["value"])
    assert scores.scores_for(np.array([0], dtype=np.uint64))[0] == 0.0


def test_weight_zero_turns_the_boost_off(tmp_path):
    reader = _bundle(tmp_path, _docs())
    _write_scores(tmp_path)
    res = Searcher([LocalShard(reader)], replace(OPTIONS, link_score_weight=0.0)
                   ).search("widget frobnicator")
    exp = res.results[0].explanation
    assert exp["link_score"]["value"] == 0.0 and exp["link_score"]["available"] is False
    assert "linkrank_relative" not in exp["link_score"]
    no_boost = sum(exp[k]["value"] * exp[k]["weight"]
                   for k in ("doc_rank", "relevance", "proximity")) + exp["bonuses"]["total"]
    assert exp["score"] == pytest.approx(no_boost)


def test_representative_url_is_the_better_scored_of_a_redirect(tmp_path):
    reader = _bundle(tmp_path, _docs(with_redirect=True))
    _write_scores(tmp_path, alias_score=0.9)  # the old url has more link score than POPULAR
    res = Searcher([LocalShard(reader)], OPTIONS).search("widget frobnicator")
    assert _urls(res)[0] == ALIAS
    rep = res.results[0].explanation["representative_url"]
    assert rep["orig_url"] == POPULAR and rep["url_score"] > rep["orig_score"]
    rows = dict(explanation_rows(res.results[0].explanation)[0])
    assert POPULAR in rows["Shown url"]


def test_representative_url_keeps_the_target_when_it_scores_higher(tmp_path):
    reader = _bundle(tmp_path / "w", _docs(with_redirect=True))
    _write_scores(tmp_path / "w", alias_score=0.001)
    res = Searcher([LocalShard(reader)], OPTIONS).search("widget frobnicator")
    assert _urls(res)[0] == POPULAR
    assert "representative_url" not in res.results[0].explanation
    # and with the weight 0 nothing is looked up: the target stays
    reader2 = _bundle(tmp_path / "x", _docs(with_redirect=True))
    _write_scores(tmp_path / "x", alias_score=0.9)
    res = Searcher([LocalShard(reader2)], replace(OPTIONS, link_score_weight=0.0)
                   ).search("widget frobnicator")
    assert POPULAR in _urls(res) and ALIAS not in _urls(res)


def test_missing_scores_file_is_normal_and_search_works(tmp_path, caplog):
    reader = _bundle(tmp_path, _docs())
    with caplog.at_level(logging.DEBUG, logger="indexer.core.signals.link_scores"):
        res = Searcher([LocalShard(reader)], OPTIONS).search("widget frobnicator")
        Searcher([LocalShard(reader)], OPTIONS).search("widget frobnicator")
    assert _urls(res)[:2] == [PLAIN, POPULAR]
    # link analysis has not run yet: the normal state of a new crawl, no warning or error
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert cached_link_scores(scores_path(tmp_path, TS)).error is None
    exp = res.results[0].explanation["link_score"]
    assert exp["value"] == 0.0 and "no link scores" in exp["note"]
    # once score_update writes the file, the next search uses it
    _write_scores(tmp_path)
    assert _urls(Searcher([LocalShard(reader)], OPTIONS).search("widget frobnicator"))[0] == POPULAR


def test_corrupt_scores_file_is_logged_and_search_works(tmp_path, caplog):
    reader = _bundle(tmp_path, _docs())
    _write_scores(tmp_path)
    path = scores_path(tmp_path, TS)
    assert _urls(Searcher([LocalShard(reader)], OPTIONS).search("widget frobnicator"))[0] == POPULAR
    data = bytearray(path.read_bytes())
    data[len(data) // 2:] = b"\0" * (len(data) - len(data) // 2)  # a torn write
    path.write_bytes(bytes(data))
    os.utime(path, ns=(1, 1))  # a new state of the file, whatever the clock's resolution
    with caplog.at_level(logging.ERROR, logger="indexer.core.signals.link_scores"):
        res = Searcher([LocalShard(reader)], OPTIONS).search("widget frobnicator")
    assert _urls(res)[:2] == [PLAIN, POPULAR]
    assert any("link scores unusable" in r.getMessage() and str(path) in r.getMessage()
               for r in caplog.records)
    assert cached_link_scores(path).error


def test_scores_are_loaded_once_per_file_version(tmp_path):
    _write_scores(tmp_path)
    cached = cached_link_scores(scores_path(tmp_path, TS))
    first = cached.get()
    assert first is not None and cached.get() is first
    _write_scores(tmp_path, alias_score=0.3)
    os.utime(scores_path(tmp_path, TS), ns=(2, 2))
    second = cached.get()
    assert second is not None and second is not first
