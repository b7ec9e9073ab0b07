"""The figures, per-kind tables and targets that ``bench/relevance_eval.py`` prints for each
mode (the local web as it is, and with its index pages hidden: :mod:`relevance_modes`).
Pure functions of the measured means; issue 36's goals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# issue 36's goals: MRR@10 per mode, and the concept queries with the index pages hidden
TARGET_MRR = {"as-is": 0.93, "hidden": 0.91}
TARGET_CONCEPT_HIDDEN = 0.75
TARGET_S10 = 0.95


def figure_lines(options: str, stats: dict[str, Any], reader: Any,
                 queries: list[tuple[str, str]], elapsed: float, mean: dict[str, float],
                 kinds: dict[str, dict[str, float]]) -> list[str]:
    """The ``name: value unit`` lines of the crawl, the index and the main run (per query
    kind too)."""
    lines = [
        f"options: {options}",
        f"pages: {stats['pages']} pages",
        f"index_documents: {stats['documents']} documents",
        f"crawl_time: {stats['build_s']:.1f} s",
        f"doc_map_entries: {reader.collection_stats().documents} entries",
        f"link_scores: {'yes' if stats.get('scored') else 'no'}",
        f"link_analysis_time: {stats['analysis']['analysis_s']:.1f} s",
        f"webgraph_nodes: {stats['analysis']['nodes']} nodes",
        f"webgraph_links: {stats['analysis']['edges']} links",
        f"index_order_time: {stats['analysis']['order_s']:.1f} s "
        f"({stats['analysis']['ordered_partitions']} partitions)",
        f"queries: {len(queries)} queries",
        f"eval_time: {elapsed:.2f} s",
        f"MRR@10: {mean['MRR@10']:.4f} score",
        f"Success@1: {mean['S@1']:.4f} score",
        f"Success@10: {mean['S@10']:.4f} score",
        f"nDCG@10: {mean['nDCG@10']:.4f} score",
        f"no_result: {mean['no_result']:.4f} share",
        f"MRR@10_odd: {mean['odd']:.4f} score",
        f"MRR@10_even: {mean['even']:.4f} score",
    ]
    for kind, m in kinds.items():
        if kind != "all":
            lines.append(f"MRR@10_{kind}: {m['MRR@10']:.4f} score (n={m['n']}, "
                         f"S@1 {m['S@1']:.4f}, S@10 {m['S@10']:.4f})")
    return lines


def mode_targets(mode: str, mean: Mapping[str, float],
                 kinds: Mapping[str, Mapping[str, float]], peers: Mapping[str, Mapping[str, Any]]
                 ) -> list[tuple[str, float, str, bool]]:
    """(what, value, goal, met) of a ``mode`` from its main run's ``mean``, its means per
    kind and the peers' results: issue 36's MRR@10 goal of the mode, Success@10, no query
    without a result, MRR@10 at least each peer's (AND); hidden: the concept kind's goal and
    no kind below Whoosh's (AND)."""
    goal = TARGET_MRR[mode]
    targets = [
        ("MRR@10", mean["MRR@10"], f">= {goal}", mean["MRR@10"] >= goal),
        ("Success@10", mean["S@10"], f">= {TARGET_S10}", mean["S@10"] >= TARGET_S10),
        ("queries without a result", mean["no_result"], "0", mean["no_result"] == 0),
    ]
    for name, result in peers.items():
        peer = result["and"]["MRR@10"]
        targets.append((f"MRR@10 against {name} AND", mean["MRR@10"], f">= {peer:.4f}",
                        mean["MRR@10"] >= peer))
    if mode == "hidden":
        concept = kinds.get("concept", {}).get("MRR@10", 0.0)
        targets.append(("MRR@10 concept", concept, f">= {TARGET_CONCEPT_HIDDEN}",
                        concept >= TARGET_CONCEPT_HIDDEN))
        whoosh = peers.get("whoosh", {}).get("kinds", {})
        for kind, peer in whoosh.items():
            if kind != "all" and kind in kinds:
                mine = kinds[kind]["MRR@10"]
                targets.append((f"MRR@10 {kind} against whoosh AND", mine,
                                f">= {peer['MRR@10']:.4f}", mine >= peer["MRR@10"]))
    return targets


def kind_table(mode: str, systems: Mapping[str, Mapping[str, Mapping[str, float]]]
               ) -> list[str]:
    """A markdown table of MRR@10 (and S@1, S@10 for the engine) per query kind of one mode:
    ``systems`` maps a system's name to its means per kind (``all`` first)."""
    names = list(systems)
    kinds = list(next(iter(systems.values())))
    lines = [f"per kind, {mode} (MRR@10; the engine's S@1 / S@10):",
             "| kind | n | " + " | ".join(names) + " |", "|" + "---|" * (2 + len(names))]
    first = names[0]
    for kind in kinds:
        mine = systems[first][kind]
        cells = [f"{mine['MRR@10']:.4f} ({mine['S@1']:.2f} / {mine['S@10']:.2f})"]
        cells += [f"{systems[n][kind]['MRR@10']:.4f}" if kind in systems[n] else "-"
                  for n in names[1:]]
        lines.append(f"| {kind} | {int(mine.get('n', 0))} | " + " | ".join(cells) + " |")
    return lines + [""]
