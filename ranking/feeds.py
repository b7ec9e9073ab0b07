"""Machine-readable outputs of the search page: RSS 2.0 results (``?f=rss``) and the OpenSearch
description document (``/opensearch.xml``) that lets browsers add the engine.

Layer: glue of the ``ranking`` app (no Django imports; :mod:`ranking.views` wraps the bytes in
responses). Both are built with :mod:`xml.etree.ElementTree`, so every text is escaped. RSS items
carry the plain title, the url, the (highlighted, HTML-escaped) snippet as the description and
the score; the channel carries ``opensearch:totalResults``, ``startIndex`` (1-based) and
``itemsPerPage``, an ``opensearch:Query`` and an ``atom:link rel="search"`` to the description
document, as the OpenSearch 1.1 response elements specify.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from email.utils import formatdate
from urllib.parse import urlencode

from ranking.core.search.pipeline import SearchResult

OPENSEARCH_NS = "http://a9.com/-/spec/opensearch/1.1/"
ATOM_NS = "http://www.w3.org/2005/Atom"
SITE_NAME = "Yioopy"  # the default; the pages pass the admin's (ranking.searchpage.appearance)
ET.register_namespace("opensearch", OPENSEARCH_NS)
ET.register_namespace("atom", ATOM_NS)


# characters XML 1.0 cannot carry, even escaped (controls, surrogates, U+FFFE/U+FFFF): a query
# holding one made the feed unreadable
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry."""
    return _NOT_XML.sub("", text)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text is not None:
        element.text = xml_text(text)
    return element


def rss(result: SearchResult, base_url: str, params: dict[str, str],
        site_name: str = SITE_NAME) -> bytes:
    """RSS 2.0 of one page of results; ``base_url`` is the site root (``http://host``),
    ``site_name`` the name the channel carries."""
    rss_el = ET.Element("rss", {"version": "2.0"})
    channel = _sub(rss_el, "channel")
    _sub(channel, "title", f"{site_name}: {result.query}")
    html_params = {k: v for k, v in params.items() if k != "f"}
    _sub(channel, "link", f"{base_url}/?{urlencode(html_params)}")
    _sub(channel, "description", f"Search results for {result.query!s}")
    _sub(channel, "language", "en")
    _sub(channel, "lastBuildDate", formatdate(usegmt=True))
    _sub(channel, f"{{{ATOM_NS}}}link", rel="search",
         type="application/opensearchdescription+xml", href=f"{base_url}/opensearch.xml",
         title=site_name[:16])
    _sub(channel, f"{{{OPENSEARCH_NS}}}totalResults", str(result.total))
    _sub(channel, f"{{{OPENSEARCH_NS}}}startIndex", str(result.offset + 1))
    _sub(channel, f"{{{OPENSEARCH_NS}}}itemsPerPage", str(result.num))
    _sub(channel, f"{{{OPENSEARCH_NS}}}Query", role="request", searchTerms=result.query,
         startIndex=str(result.offset + 1), count=str(result.num))
    for r in result.results:
        item = _sub(channel, "item")
        _sub(item, "title", r.plain_title or r.url)
        _sub(item, "link", r.url)
        _sub(item, "description", r.snippet)
        _sub(item, "guid", r.url, isPermaLink="true")
        _sub(item, "category", f"score {r.score:.4f}")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(rss_el, encoding="utf-8",
                                                                       xml_declaration=False)


def opensearch_description(base_url: str, site_name: str = SITE_NAME,
                           image: str | None = None) -> bytes:
    """The OpenSearch 1.1 description document of the engine named ``site_name`` (its
    ShortName cut to the 16 characters the specification allows), with the ``image`` url of
    its logo if it has one."""
    root = ET.Element("OpenSearchDescription", {"xmlns": OPENSEARCH_NS})
    _sub(root, "ShortName", site_name[:16])
    _sub(root, "Description", f"Search the pages {site_name} has crawled")
    _sub(root, "InputEncoding", "UTF-8")
    _sub(root, "OutputEncoding", "UTF-8")
    _sub(root, "Language", "*")
    _sub(root, "Url", type="text/html", method="get",
         template=f"{base_url}/?q={{searchTerms}}")
    _sub(root, "Url", type="application/rss+xml", method="get",
         template=f"{base_url}/?q={{searchTerms}}&f=rss")
    _sub(root, "Url", type="application/json", method="get",
         template=f"{base_url}/?q={{searchTerms}}&f=json")
    _sub(root, "Url", type="application/x-suggestions+json", method="get",
         template=f"{base_url}/suggest?q={{searchTerms}}&f=opensearch")
    _sub(root, "Url", type="application/opensearchdescription+xml", rel="self",
         template=f"{base_url}/opensearch.xml")
    if image:
        _sub(root, "Image", image)
    _sub(root, "Query", role="example", searchTerms="search engine")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8",
                                                                       xml_declaration=False)
