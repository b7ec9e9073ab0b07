"""``manage.py linkrank [--crawl TS]``: LinkRank and seed trust for a crawl's web graph.

Seeds and their policies come from the crawl's seed sites in the database. Glue for the LinkRank
step of ``linkgraph.core.analysis`` (the code the engine's own runs use).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from linkgraph.core import LinkRankConfig, TrustConfig, TrustMethod
from linkgraph.core.analysis import rank_graph

from .webgraph import (
    add_crawl_argument,
    crawl_facts,
    crawl_seeds,
    crawl_timestamp,
    open_graph,
    progress_bar,
    stage_progress,
    work_directory,
)


class Command(BaseCommand):
    help = "Compute LinkRank and trust (from the crawl's seed policies) for a crawl's web graph."

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)
        defaults = LinkRankConfig()
        parser.add_argument("--damping", type=float, default=defaults.damping)
        parser.add_argument("--tol", type=float, default=defaults.tol)
        parser.add_argument("--max-iter", type=int, default=defaults.max_iter)
        parser.add_argument("--same-host-weight", type=float, default=defaults.same_host_weight,
                            help="weight of a link inside one host (1 = no discount)")
        parser.add_argument("--same-domain-weight", type=float,
                            default=defaults.same_domain_weight,
                            help="weight of a link between two hosts of one registered domain "
                                 "(1 = no discount)")
        parser.add_argument("--domain-links-per-page", type=float,
                            default=defaults.domain_links_per_page,
                            help="links' worth one registered domain's pages may give a page of "
                                 "another host, in LinkRank and trust splitting (0 = no limit)")
        parser.add_argument("--loop-weight", type=float, default=defaults.loop_weight,
                            help="weight of a link on a detected loop (1 = no discount)")
        parser.add_argument("--personalize", action="store_true",
                            help="teleport to the favored seeds instead of uniformly")
        parser.add_argument("--trust-method", choices=[m.value for m in TrustMethod],
                            default=TrustMethod.DAMPENING.value)
        parser.add_argument("--trust-beta", type=float, default=TrustConfig().beta)

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        timestamp = crawl_timestamp(options)
        try:
            config = LinkRankConfig(
                damping=options["damping"], tol=options["tol"], max_iter=options["max_iter"],
                same_host_weight=options["same_host_weight"],
                same_domain_weight=options["same_domain_weight"],
                domain_links_per_page=options["domain_links_per_page"],
                loop_weight=options["loop_weight"])
            trust_config = TrustConfig(method=TrustMethod(options["trust_method"]),
                                       beta=options["trust_beta"],
                                       within_domain=crawl_facts().policy_within_domain(
                                           timestamp),
                                       domain_links_per_page=options["domain_links_per_page"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        open_graph(timestamp)  # a clear error when there is no graph yet
        seeds = crawl_seeds(timestamp)
        ranking = rank_graph(work_directory(), timestamp, seeds, config, trust_config,
                             options["personalize"],
                             stage_progress(progress_bar(self, "iterations")))
        graph, result, trust = ranking.graph, ranking.linkrank, ranking.trust
        state = "converged" if result.converged else "did NOT converge"
        top = int(np.argmax(result.scores)) if graph.n else -1
        self.stdout.write(
            f"LinkRank of crawl {timestamp}: {graph.n} nodes, {graph.edges} links, {state} "
            f"after {result.iterations} iterations (delta {result.delta:.2e}); "
            f"top page {graph.url(top) if top >= 0 else '-'}.\n"
            f"Trust ({trust_config.method}"
            f"{', within domains' if trust_config.within_domain else ''}): {trust.seeds_found} of {len(seeds)} seeds in the "
            f"graph, {int((trust.trust > 0).sum())} pages favored, "
            f"{int((trust.trust < 0).sum())} distrusted; "
            f"in {time.monotonic() - started:.1f}s.")
