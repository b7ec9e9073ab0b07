"""Link analysis (seeds 002, 003, 004): web graph, Loops, LinkRank, trust, scores, fields.

Layer: ``linkgraph.core`` (pure Python + numpy/scipy; no Django). The ``linkgraph`` app's
services and commands are the glue. What other apps read of its results lives below it, in
``indexer.core``: the per-url score file (:mod:`indexer.core.signals.link_scores`), url hashes
(:mod:`indexer.core.urls`), where a crawl's bundles, graph and scores live
(:mod:`indexer.core.runtime.workdir`) and the seed policies (:mod:`indexer.core.policies`).

Flow, per crawl (timestamp ``ts``, work directory ``work``)::

    read_bundle_links(crawl_bundles(work, ts))  -> PageLinks records
    WebGraphBuilder(base).add_all(records).build() -> WebGraph  -> save_graph(graph_dir(...))
    find_loops(graph)                           -> per-edge marks (optional)
    linkrank(graph), propagate_trust(graph, seeds) -> node scores  -> save_graph(...)
    write_scores(scores_path(work, ts), graph)  -> LinkScores(path).scores_for(url_hashes)
"""

from .builder import PageLinks, WebGraphBuilder, page_links
from .bundles import CrawlLinks, read_bundle_links
from .dumpers import (
    Aggregate,
    GroupInfo,
    LinkDumper,
    LinkInfo,
    LoopReader,
    LoopSet,
    NodeDumper,
    NodeGroup,
    NodeInfo,
    NodeLinks,
    NodeOrder,
    NodeReader,
)
from .fields import AnchorField, anchor_fields
from .graph import WebGraph, load_graph, save_graph
from .linkrank import PLAIN_PAGERANK, LinkRankConfig, LinkRankResult, linkrank
from .loops import LoopsConfig, find_loops
from .trust import TrustConfig, TrustMethod, TrustResult, TrustSeed, propagate_trust

__all__ = [
    "PLAIN_PAGERANK", "Aggregate", "AnchorField", "CrawlLinks", "GroupInfo", "LinkDumper",
    "LinkInfo", "LinkRankConfig", "LinkRankResult", "LoopReader", "LoopSet", "LoopsConfig",
    "NodeDumper", "NodeGroup", "NodeInfo", "NodeLinks", "NodeOrder",
    "NodeReader", "PageLinks", "TrustConfig", "TrustMethod", "TrustResult",
    "TrustSeed", "WebGraph", "WebGraphBuilder", "anchor_fields", "find_loops", "linkrank",
    "load_graph", "page_links", "propagate_trust", "read_bundle_links", "save_graph",
]
