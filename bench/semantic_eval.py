"""The semantic signal measured for ``bench/relevance_eval.py``: MRR@10 per query kind with and
without it, the query p95 with and without, and what embedding the crawl's pages cost.

The signal (``ranking.core.semantic.rerank``) re-ranks the first ``semantic_depth`` results by the
similarity of their page's embedding to the query's, fused by rank with the score at weight
``semantic_weight``. It needs the ``semantic`` extra (onnxruntime, tokenizers), the model's
files (``manage.py fetch_semantic_model``, read from ``SEMANTIC_MODEL_DIR``, default
``var/models``) and the page embeddings beside the bundle: the
first run embeds the cached crawl's pages as ``manage.py embed_index`` does
(``ranking.core.semantic.build``) and prints that cost; later runs reuse them.

The comparison runs the dev queries twice on the same index and options, the signal off
(weight 0) then on (``--semantic-weight``, default 1: plain reciprocal rank fusion), each
query timed alone after a warm-up query (the model is loaded before the first timed query).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from indexer.core.bundle.reader import IndexBundleReader
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.search.relax import search_with_fallback
from ranking.core.semantic.build import build_semantic_index
from ranking.core.semantic.embedder import SemanticUnavailable, TextEmbedder, default_embedder
from ranking.core.semantic.model_files import MINILM_L6_V2_INT8
from ranking.core.semantic.rerank import default_semantic
from ranking.core.semantic.store import load_semantic_index, semantic_dir
from ranking.core.shard.local import LocalShard

DEFAULT_WEIGHT = 1.0
ROOT = Path(__file__).resolve().parent.parent


def installed_embedder() -> TextEmbedder:
    """The model ``manage.py fetch_semantic_model`` fetched (``SEMANTIC_MODEL_DIR`` or
    ``var/models``, the default model). Raises SemanticUnavailable."""
    root = os.environ.get("SEMANTIC_MODEL_DIR") or str(ROOT / "var" / "models")
    return default_embedder(Path(root), MINILM_L6_V2_INT8)


def ensure_embeddings(bundle: Path, embedder_of: Callable[[], TextEmbedder]
                      = installed_embedder) -> dict[str, Any]:
    """The bundle's page embeddings, built when missing or made with another model: the
    model's load time, and the build's pages and time per page (from the stored meta when they
    were built by an earlier run)."""
    start = time.perf_counter()
    embedder = embedder_of()
    load_s = time.perf_counter() - start
    try:
        stored = load_semantic_index(semantic_dir(bundle))
        if stored.model == embedder.name:
            meta = stored.meta
            embedded = int(meta.get("embedded", 0))
            return {"model": embedder.name, "load_s": load_s, "pages": len(stored),
                    "embedded": embedded, "build_s": float(meta.get("seconds", 0.0)),
                    "ms_per_page": 1000.0 * float(meta.get("embed_seconds", 0.0))
                    / max(embedded, 1), "cached": True}
    except (OSError, ValueError):
        pass
    reader = IndexBundleReader(bundle)
    try:
        report = build_semantic_index(reader, embedder)
    finally:
        reader.close()
    return {"model": embedder.name, "load_s": load_s, "pages": report.pages,
            "embedded": report.embedded, "build_s": report.seconds,
            "ms_per_page": report.ms_per_page, "cached": False}


def timed_run(searcher: Searcher, queries: list[tuple[str, str]]
              ) -> tuple[dict[str, list[str]], list[float]]:
    """The top 10 urls of each query (as ``relevance_eval.run_queries``) and each query's
    seconds."""
    search_with_fallback(searcher, "warm up the caches", num=10, snippets=False)
    run: dict[str, list[str]] = {}
    seconds: list[float] = []
    for qid, query in queries:
        start = time.perf_counter()
        result = search_with_fallback(searcher, query, num=10, snippets=False)
        seconds.append(time.perf_counter() - start)
        run[qid] = [r.url for r in result.results]
    return run, seconds


def p95_ms(seconds: list[float]) -> float:
    return float(np.percentile(np.array(seconds) * 1000.0, 95)) if seconds else 0.0


def semantic_lines(shard: LocalShard, options: SearchOptions, queries: list[tuple[str, str]],
                   weight: float, by_kind: Callable[[dict[str, list[str]], str], dict],
                   embedder: Callable[[], TextEmbedder] = installed_embedder) -> list[str]:
    """The ``name: value`` lines of the comparison; ``by_kind(run, name)`` scores a run per
    query kind (with an ``all`` entry); ``embedder()`` gives the model. One line saying why
    when the signal cannot run."""
    try:
        built = ensure_embeddings(Path(shard.reader.path), embedder)
    except SemanticUnavailable as exc:
        return [f"semantic: not measured ({exc})"]
    off = replace(options, semantic_weight=0.0)
    on = replace(options, semantic_weight=weight)
    run_off, t_off = timed_run(Searcher([shard], off), queries)
    run_on, t_on = timed_run(Searcher([shard], on, semantic=default_semantic([shard], embedder)),
                             queries)
    kinds_off, kinds_on = by_kind(run_off, "semantic-off"), by_kind(run_on, "semantic-on")
    lines = [
        f"semantic: weight {weight:g}, depth {on.semantic_depth}, k {on.semantic_k:g}, "
        f"model {built['model']} (loaded in {built['load_s']:.2f} s)",
        f"semantic_pages: {built['pages']} pages embedded"
        + (" (reused)" if built["cached"] else ""),
        f"semantic_embed_time: {built['build_s']:.1f} s ({built['ms_per_page']:.1f} ms a page)",
    ]
    for kind in kinds_off:
        a, b = kinds_off[kind], kinds_on[kind]
        lines.append(f"MRR@10_{kind}_semantic: off {a['MRR@10']:.4f} on {b['MRR@10']:.4f} "
                     f"({b['MRR@10'] - a['MRR@10']:+.4f}, n={a['n']})")
    p_off, p_on = p95_ms(t_off), p95_ms(t_on)
    lines += [f"query_p95_semantic_off: {p_off:.1f} ms",
              f"query_p95_semantic_on: {p_on:.1f} ms ({p_on / max(p_off, 1e-9):.2f}x)"]
    return lines
