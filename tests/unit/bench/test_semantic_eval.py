"""The semantic comparison of bench/relevance_eval.py (bench/semantic_eval.py) on the semantic
fixture index: it embeds the pages once, then prints per kind off and on and the p95s."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import semantic_eval as se  # noqa: E402

from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from ranking.core.options import SearchOptions  # noqa: E402
from ranking.core.semantic.embedder import default_embedder  # noqa: E402
from ranking.core.semantic.store import semantic_dir  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402
from tests.fixtures.semantic_model import DEV_MODEL  # noqa: E402
from tests.fixtures.semantic_model import semantic_model_root as semantic_model_root  # noqa: E402
from tests.web.semantic_site import CONCEPT_QUERY, RIGHT_PAGE, build_semantic_site  # noqa: E402


def reciprocal_rank(run: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """MRR@10 of the one judged query (the concept query, right page RIGHT_PAGE)."""
    urls = run["c1"][:10]
    mrr = 1.0 / (urls.index(RIGHT_PAGE) + 1) if RIGHT_PAGE in urls else 0.0
    return {"all": {"MRR@10": mrr, "n": 1}, "concept": {"MRR@10": mrr, "n": 1}}


def test_semantic_lines_compare_off_and_on(tmp_path: Path, semantic_model_root: Path) -> None:
    bundle = build_semantic_site(tmp_path)
    shard = LocalShard(IndexBundleReader(bundle))
    seen: list[str] = []

    def by_kind(run: dict[str, list[str]], name: str) -> dict[str, dict[str, float]]:
        seen.append(name)
        return reciprocal_rank(run)

    try:
        def model():
            return default_embedder(semantic_model_root, DEV_MODEL)

        lines = se.semantic_lines(shard, SearchOptions(), [("c1", CONCEPT_QUERY)], 1.0, by_kind,
                                  model)
        again = se.semantic_lines(shard, SearchOptions(), [("c1", CONCEPT_QUERY)], 1.0, by_kind,
                                  model)
    finally:
        shard.reader.close()
    assert seen == ["semantic-off", "semantic-on"] * 2
    text = "\n".join(lines)
    assert (semantic_dir(bundle) / "meta.json").is_file()
    assert "semantic_pages: 8 pages embedded\n" in text
    assert "(reused)" in "\n".join(again)
    concept = next(line for line in lines if line.startswith("MRR@10_concept_semantic:"))
    off, on = float(concept.split()[2]), float(concept.split()[4])
    assert on == 1.0 and off < on  # the right page holds the words in its text only
    assert any(line.startswith("query_p95_semantic_off: ") for line in lines)
    assert any(line.startswith("query_p95_semantic_on: ") and line.endswith("x)")
               for line in lines)


def test_p95_of_query_times() -> None:
    assert se.p95_ms([0.001] * 19 + [0.1]) > 1.0
    assert se.p95_ms([]) == 0.0
