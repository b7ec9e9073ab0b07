"""Link analysis (seeds 002, 003, 004): web graph, Loops, LinkRank, trust, scores, fields.

Layer: ``ranking.core`` (pure Python + numpy/scipy; no Django). The management commands in
``ranking/management/commands`` are the glue; the search pipeline and the scheduler read
:class:`LinkScores`.

Flow, per crawl (timestamp ``ts``, work directory ``work``)::

    read_bundle_links(crawl_bundles(work, ts))  -> PageLinks records
    WebGraphBuilder(base).add_all(records).build() -> WebGraph  -> save_graph(graph_dir(...))
    find_loops(graph)                           -> per-edge marks (optional)
    linkrank(graph), propagate_trust(graph, seeds) -> node scores  -> save_graph(...)
    write_scores(scores_path(work, ts), graph)  -> LinkScores(path).scores_for(url_hashes)
"""

from .builder import PageLinks, WebGraphBuilder, page_links
from .bundles import (
    CrawlLinks,
    crawl_bundles,
    crawl_timestamps,
    graph_dir,
    newest_crawl,
    read_bundle_links,
    scores_path,
)
from .dumpers import LinkDumper, LinkInfo, NodeDumper, NodeInfo, NodeLinks, NodeOrder, NodeReader
from .errors import CorruptGraphError, GraphFormatTooNew, GraphNotFound, LinkGraphError
from .fields import (
    AnchorField,
    Representative,
    anchor_fields,
    representative_url,
    representative_urls,
)
from .graph import WebGraph, as_hash_array, hashes_of, load_graph, save_graph, url_hash
from .linkrank import PLAIN_PAGERANK, LinkRankConfig, LinkRankResult, linkrank
from .loops import LoopsConfig, find_loops
from .scores import LinkScores, write_scores
from .trust import Policy, TrustConfig, TrustMethod, TrustResult, TrustSeed, propagate_trust

__all__ = [
    "PLAIN_PAGERANK", "AnchorField", "CorruptGraphError", "CrawlLinks", "GraphFormatTooNew",
    "GraphNotFound", "LinkDumper", "LinkGraphError", "LinkInfo", "LinkRankConfig",
    "LinkRankResult", "LinkScores", "LoopsConfig", "NodeDumper", "NodeInfo", "NodeLinks",
    "NodeOrder", "NodeReader", "PageLinks", "Policy", "Representative", "TrustConfig",
    "TrustMethod", "TrustResult", "TrustSeed", "WebGraph", "WebGraphBuilder", "anchor_fields",
    "as_hash_array", "crawl_bundles", "crawl_timestamps", "find_loops", "graph_dir",
    "hashes_of", "linkrank", "load_graph", "newest_crawl", "page_links", "propagate_trust",
    "read_bundle_links", "representative_url", "representative_urls", "save_graph",
    "scores_path", "url_hash", "write_scores",
]
