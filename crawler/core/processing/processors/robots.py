"""The robots.txt processor (MIME type ``text/robot``, given to every ``/robots.txt``).

Layer: ``crawler.core.processing.processors``. Parsed with Protego (the modern conventions:
wildcards, ``$``, longest match, ``Allow``). The extraction carries a
:class:`~crawler.core.processing.page.RobotsInfo`
(the text, the crawl delay for our agent, the announced sitemaps) for the scheduler, and the
sitemaps as ``sitemap`` links (which are not pruned).
"""

from __future__ import annotations

import logging

from protego import Protego

from crawler.core.processing.encoding import decode
from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage, RobotsInfo, ScoredSentence
from crawler.core.processing.processors.base import ProcessorContext

log = logging.getLogger(__name__)
MAX_SITEMAPS = 100


def parse_robots(text: str, agent: str) -> RobotsInfo:
    """Crawl delay and sitemaps of a robots.txt for ``agent`` (never raises)."""
    try:
        parser = Protego.parse(text)
        delay = parser.crawl_delay(agent)
        sitemaps = tuple(list(parser.sitemaps)[:MAX_SITEMAPS])
    except Exception as exc:  # Protego is lenient; any failure means "nothing usable"
        log.info("robots.txt not parsed: %s", exc)
        return RobotsInfo(text=text)
    return RobotsInfo(text=text, crawl_delay=float(delay) if delay is not None else None,
                      sitemaps=sitemaps)


class RobotsProcessor:
    """Stateless."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        text, _ = decode(body, page.header("content-type"))
        info = parse_robots(text, ctx.config.robot_name)
        collector = LinkCollector(page.url, None, MAX_SITEMAPS)
        for sitemap in info.sitemaps:
            collector.add(sitemap, "", "sitemap")
        summary = " ".join(text.split())[: ctx.config.max_description_len]
        return Extraction(
            title="robots.txt",
            sentences=(ScoredSentence(summary, 1.0),) if summary else (),
            links=tuple(link for link in collector.links("en")),
            hash_text=text,
            robots=info,
            lang="en",
            lang_source="default",
        )
