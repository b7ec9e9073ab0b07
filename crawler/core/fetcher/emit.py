"""Emitted urls: the links of a processed page as discovered urls for the queue servers.

Layer: ``crawler.core.fetcher``. The page handling (:mod:`.pages`) asks :class:`LinkEmitter`
for a page's discovered urls; each carries what the scheduler weighs it by (the seed, *Yioop's
crawl, index and ranking*): its depth, its rank among the page's links, the source's weight and
tier, its share of the page's OPIC cash, and the crawl policy it inherits
(:mod:`crawler.core.definition.policy`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from crawler.core.definition.crawl import CrawlConfig, CrawlOrder
from crawler.core.definition.policy import child_policy, domain_scoped, page_switch
from crawler.core.processing.page import Link
from crawler.core.scheduler import DiscoveredUrl, ScheduleEntry
from crawler.core.transport.wire import discovered_to_wire
from crawler.core.urls import file_extension

NON_HTML_EXTENSIONS = frozenset({"pdf", "txt", "csv", "tsv", "xml", "rss", "atom", "gif", "jpg",
                                 "jpeg", "png", "svg", "bmp", "webp", "gz", "zip", "tar", "mp3",
                                 "mp4", "json", "doc", "docx", "ppt", "pptx", "xls", "xlsx",
                                 "odt", "ods", "odp", "epub"})

LinkScores = Callable[[Sequence[str]], np.ndarray]
"""Link-analysis scores of urls (0 or not finite: unscored), from a previous score update."""


class LinkedPage(Protocol):
    """What a page's discovered urls are made of: a
    :class:`crawler.core.processing.page.ProcessedPage`,
    or the slim copy a worker process sends back (:class:`.processing.PageLinks`)."""

    @property
    def url(self) -> str: ...
    @property
    def links(self) -> tuple[Link, ...]: ...
    @property
    def fields(self) -> Mapping[str, Any]: ...
    @property
    def safe(self) -> bool: ...
    @property
    def is_sitemap(self) -> bool: ...


class LinkEmitter:
    """Turns a page's links into discovered urls (their JSON rows). Immutable."""

    def __init__(self, crawl: CrawlConfig, link_scores: LinkScores | None = None) -> None:
        self.crawl = crawl
        self._link_scores = link_scores

    @property
    def portable(self) -> bool:
        """Does a ``LinkEmitter(self.crawl)`` elsewhere (a page processing worker process,
        :mod:`.processing`) make the same urls? Not with link scores, nor for a subclass."""
        return self._link_scores is None and type(self) is LinkEmitter

    def discovered(self, page: LinkedPage, entry: ScheduleEntry,
                   refused: list[list[Any]] | None = None) -> Iterator[list[Any]]:
        """The discovered-url rows of ``page``, fetched for ``entry``: none past the crawl's
        depth, none the site rules forbid, none pointing back to the page by its location
        or canonical link. With ``refused``, each link left out for the depth or the site
        rules is appended to it as a refused row ``[url, reason, detail]`` (reasons of
        :data:`crawler.core.queue_server.activity.REASONS`; a url once per page), so that the
        refused-url counts see what the fetcher drops too."""
        links = [link for link in page.links if link.kind not in ("location", "canonical")
                 or link.url != page.url]
        said: set[str] = set()

        def refuse(url: str, reason: str, detail: str) -> None:
            if refused is not None and url not in said:
                said.add(url)
                refused.append([url, reason, detail])
        if self.crawl.max_depth >= 0 and entry.depth + 1 > self.crawl.max_depth:
            for link in links:
                refuse(link.url, "depth", f"depth {entry.depth + 1} > the limit "
                                          f"{self.crawl.max_depth}, linked from {page.url}")
            return
        order, shares = self.link_order(links)
        links = [links[i] for i in order]
        # seed policies travel with the links (crawler.core.definition.policy); an unsafe page switches
        inherited = child_policy(entry.policy, entry.policy_depth,
                                 page_switch(page.fields, page.safe))
        scoped = self.crawl.policy_within_domain
        cash = (entry.weight * shares) if (links and self.crawl.order == CrawlOrder.OPIC) \
            else np.zeros(len(links))
        for index, link in enumerate(links):
            refusal = self.crawl.site_rules.refusal(link.url)
            if refusal:
                refuse(link.url, refusal, f"linked from {page.url}")
                continue
            is_sitemap = link.kind == "sitemap" or page.is_sitemap and link.url.endswith(
                (".xml", ".xml.gz"))
            policy, policy_depth = (domain_scoped(inherited, page.url, link.url) if scoped
                                    else inherited)
            yield discovered_to_wire(DiscoveredUrl(
                link.url, entry.depth + 1, index, source_url=page.url,
                source_weight=entry.weight, source_tier=entry.tier, is_sitemap=is_sitemap,
                is_html=file_extension(link.url) not in NON_HTML_EXTENSIONS,
                opic_cash=float(cash[index]), policy=policy.value, policy_depth=policy_depth,
                anchor_text=link.text))

    def link_order(self, links: Sequence[Link]) -> tuple[np.ndarray, np.ndarray]:
        """The order in which a page's links are ranked (their link index i, hence the weight
        the scheduler gives them) and each one's share of the page's OPIC cash.

        Without link-analysis scores: page order and equal shares (the seed's rule). With them
        (a previous ``manage.py score_update``), better-scored targets come first and take a
        share of the cash proportional to their score (plus an even part, so an unscored url
        still gets some)."""
        n = len(links)
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        if self._link_scores is None:
            return np.arange(n), np.full(n, 1.0 / n)
        scores = np.asarray(self._link_scores([link.url for link in links]), dtype=np.float64)
        scores = np.where(np.isfinite(scores) & (scores > 0), scores, 0.0)
        order = np.argsort(-scores, kind="stable")
        weights = scores[order] + (scores.mean() if scores.any() else 1.0)
        return order, weights / weights.sum()
