"""The sitemap processor: XML sitemaps and sitemap indexes (gzipped ones are unpacked by the
page processor before they get here).

Layer: ``crawler.core.processing.processors``. Every ``<loc>`` of a ``<url>`` or ``<sitemap>``
becomes a ``sitemap`` link (not pruned: the seed prunes neither robots.txt nor sitemap links), up to
``MAX_SITEMAP_LINKS``. Sitemaps have no text to index.
"""

from __future__ import annotations

from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage
from crawler.core.processing.processors.base import ProcessorContext
from crawler.core.processing.processors.xmlparse import local, parse_xml

MAX_SITEMAP_LINKS = 50_000


class SitemapProcessor:
    """Stateless."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        root = parse_xml(body)
        if root is None:
            return Extraction(is_sitemap=True, errors=("sitemap is not XML",))
        collector = LinkCollector(page.url, None, MAX_SITEMAP_LINKS)
        kind = local(root.tag)
        for element in root.iter():
            if local(element.tag) == "loc" and element.text:
                collector.add(element.text.strip(), "", "sitemap")
                if collector.full:
                    break
        title = "sitemap index" if kind == "sitemapindex" else "sitemap"
        return Extraction(
            title=title,
            links=collector.links("en"),
            hash_text=page.url,
            is_sitemap=True,
        )
