"""The semantic signal's fusion by rank and the stored page embeddings (no model needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from indexer.core.ids import DocType, hash7, make_doc_id
from ranking.core.semantic.rerank import rank_fusion, semantic_ranks, similar_pages
from ranking.core.semantic.store import (
    CachedSemanticIndex,
    load_semantic_index,
    semantic_dir,
    url_keys,
    write_semantic_index,
)


def test_rank_fusion_is_weighted_reciprocal_rank_fusion():
    got = rank_fusion([1, 2, 3], [3, 1, 2], k=60.0, weight=1.0)
    want = [1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62]
    assert np.allclose(got, want)
    # the weight scales the semantic term only
    assert np.allclose(rank_fusion([1], [2], k=10.0, weight=0.5), [1 / 11 + 0.5 / 12])
    # no embedding: an infinite semantic rank adds nothing
    assert np.allclose(rank_fusion([4], [np.inf], k=60.0, weight=1.0), [1 / 64])


def test_equal_weight_fusion_lets_a_far_better_semantic_rank_win():
    # lexical order a, b, c; semantically c, b, a. With k = 1 and weight 1, a (1st, 3rd)
    # and c (3rd, 1st) both score 1/2 + 1/4 = .75 (a tie: the score order keeps a first),
    # b (2nd, 2nd) 1/3 + 1/3
    scores = rank_fusion([1, 2, 3], [3, 2, 1], k=1.0, weight=1.0)
    assert np.argsort(-scores, kind="stable").tolist() == [0, 2, 1]
    # a heavier semantic weight puts c first
    scores = rank_fusion([1, 2, 3], [3, 2, 1], k=1.0, weight=2.0)
    assert np.argsort(-scores, kind="stable").tolist()[0] == 2


def test_semantic_ranks_highest_first_and_missing_last():
    ranks = semantic_ranks(np.array([0.2, np.nan, 0.9, 0.2]))
    assert ranks.tolist() == [2.0, np.inf, 1.0, 3.0]  # ties: first come first


def _ids(urls):
    return np.frombuffer(b"".join(make_doc_id(u, DocType.PAGE, hash7(u), "h.test")
                                  for u in urls), np.uint8).reshape(-1, 24)


def _unit(rows):
    rows = np.asarray(rows, np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_store_round_trip_lookup_and_nearest(tmp_path):
    urls = [f"http://h.test/{i}" for i in range(5)]
    vectors = _unit([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0.9, 0.1], [0, 0, 1]])
    assert write_semantic_index(semantic_dir(tmp_path), "m", _ids(urls), vectors) == 5
    index = load_semantic_index(semantic_dir(tmp_path))
    assert index.model == "m" and len(index) == 5 and index.dim == 3
    assert bool(np.all(index.keys[1:] > index.keys[:-1]))
    keys = url_keys(_ids([urls[3], "http://h.test/missing", urls[0]]))
    rows = index.rows_of(keys)
    assert rows[1] == -1 and rows[0] >= 0 and rows[2] >= 0
    assert bytes(index.doc_ids[rows[0]]) == _ids([urls[3]]).tobytes()
    assert np.allclose(index.similarities(rows[[0, 2]], vectors[3]),
                       [1.0, float(vectors[0] @ vectors[3])], atol=1e-3)
    # the nearest of url 0 are url 1, then the others; itself left out
    own = url_keys(_ids([urls[0]]))
    found = similar_pages([index], int(own[0]), 2)
    near = [bytes(index.doc_ids[row]) for _, row, _ in found]
    assert near[0] == _ids([urls[1]]).tobytes()
    assert _ids([urls[0]]).tobytes() not in near
    assert found[0][2] >= found[1][2]
    assert similar_pages([index], int(url_keys(_ids(["http://h.test/x"]))[0]), 3) == []


def test_nearest_scans_in_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr("ranking.core.semantic.store.BLOCK_ROWS", 2)
    urls = [f"http://h.test/{i}" for i in range(7)]
    vectors = _unit(np.eye(7, dtype=np.float32) + 0.01)
    write_semantic_index(semantic_dir(tmp_path), "m", _ids(urls), vectors)
    index = load_semantic_index(semantic_dir(tmp_path))
    row = int(index.rows_of(url_keys(_ids([urls[6]])))[0])
    rows, sims = index.nearest(vectors[6], 1)
    assert rows.tolist() == [row] and sims[0] == pytest.approx(1.0, abs=1e-3)


def test_rebuild_replaces_and_the_cache_reloads(tmp_path):
    cached = CachedSemanticIndex(tmp_path)
    assert cached.get() is None  # none yet: the signal is off, no error
    write_semantic_index(semantic_dir(tmp_path), "m", _ids(["http://h.test/a"]), _unit([[1, 0]]))
    assert len(cached.get()) == 1
    write_semantic_index(semantic_dir(tmp_path), "m", _ids(["http://h.test/a", "http://h.test/b"]),
                         _unit([[1, 0], [0, 1]]))
    assert len(cached.get()) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["semantic"]  # no leftovers


def test_damaged_embeddings_read_as_none(tmp_path):
    write_semantic_index(semantic_dir(tmp_path), "m", _ids(["http://h.test/a", "http://h.test/b"]),
                         _unit([[1, 0], [0, 1]]))
    np.save(semantic_dir(tmp_path) / "vectors.npy", np.zeros((1, 2), np.float16))
    meta = semantic_dir(tmp_path) / "meta.json"
    meta.write_text(json.dumps({"model": "m", "count": 2}))
    assert CachedSemanticIndex(tmp_path).get() is None
    meta.write_text("{not json")
    assert CachedSemanticIndex(tmp_path).get() is None


def test_two_embeddings_for_one_url_are_refused(tmp_path):
    with pytest.raises(ValueError):
        write_semantic_index(semantic_dir(tmp_path), "m", _ids(["http://h.test/a"] * 2),
                             _unit([[1, 0], [0, 1]]))
