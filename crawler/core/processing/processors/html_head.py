"""What the HTML processor reads from a page's head elements, whichever parser built the tree.

Layer: ``crawler.core.processing.processors``. Step 2 of :mod:`.html`: ``<title>``, metas
(robots, description, keywords, refresh, content-language), ``<base href>``, ``<link
rel=canonical>``, ``<html lang>`` and the xml prologue's ``lang``. The two page trees
(:mod:`.lexbor_tree`, the common one, and :mod:`.lxml_tree`, for pages a scraper reads) hand
:func:`read_head` the same things: the ``meta``, ``link``, ``base`` and ``title`` elements of
the whole page in document order, each as ``(tag, attributes)`` with its attributes as a
mapping (a valueless attribute maps to ``""`` or ``None``: both read as empty), the text of
the first ``title``, and the root element's ``lang``. Contract: the same elements give the
same :class:`Head`, whatever tree they came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from crawler.core.urls import canonicalize

_XML_LANG = re.compile(r"""^\s*<\?xml[^>]*?\blang\s*=\s*["']([^"']+)""")
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ue000-\ue004]")

# (tag, attributes) of one head element, as the page trees give them
HeadElement = tuple[str, Mapping[str, str | None]]


class Head(NamedTuple):
    """What step 2 reads from the head elements (wherever they are in the tree)."""

    metas: list[tuple[str, str]]     # (name or property, content), in order
    descriptions: list[str]
    keywords: list[str]
    declared: list[str]              # language tags, in the order they are trusted
    refresh: str                     # the first meta refresh (or location) content
    charset: str | None
    base: str                        # the url links are resolved against
    canonical: str                   # the first canonical link that resolves, or ""
    title: str                       # the <title> text, or ""


def _attr(attributes: Mapping[str, str | None], name: str) -> str:
    value = attributes.get(name)
    return value.strip() if value else ""


def read_head(elements: Iterable[HeadElement], title: str, root_lang: str, url: str,
              text: str | None, utf8: bytes | None, http_language: str) -> Head:
    """Step 2, in one pass over ``elements`` (the page's ``meta``, ``link``, ``base`` and
    ``title`` elements below its root, in document order): metas in order, the first meta
    with a charset attribute, the first base with an href, canonical links; ``title`` is the
    first title's text (spaces collapsed), ``root_lang`` the root element's ``lang``, ``text``
    or ``utf8`` the page (for its xml prologue)."""
    metas: list[tuple[str, str]] = []
    descriptions: list[str] = []
    keywords: list[str] = []
    declared: list[str] = []
    head = text[:512] if text is not None else utf8[:2048].decode("utf-8", "ignore")[:512]
    match = _XML_LANG.match(CONTROL.sub(" ", head))
    if match:
        declared.append(match.group(1))
    declared.append(root_lang.strip())
    refresh = ""
    charset = None
    base_href: str | None = None
    canonical_hrefs: list[str] = []
    for tag, attributes in elements:
        if tag == "meta":
            name = (_attr(attributes, "name") or _attr(attributes, "property")).lower()
            equiv = _attr(attributes, "http-equiv").lower()
            content = _attr(attributes, "content")
            if name:
                metas.append((name, content))
            if name in ("description", "og:description", "dc.description") and content:
                descriptions.append(content)
            elif name == "keywords" and content:
                keywords.extend(k.strip() for k in content.split(",") if k.strip())
            elif name in ("language", "dc.language"):
                declared.append(content)
            if equiv == "content-language":
                declared.append(content.split(",")[0])
            elif equiv in ("refresh", "location") and not refresh:
                refresh = content
            if charset is None and "charset" in attributes:
                charset = _attr(attributes, "charset")
        elif tag == "link":
            if "canonical" in _attr(attributes, "rel").lower().split():
                canonical_hrefs.append(_attr(attributes, "href"))
        elif tag == "base":
            if base_href is None and "href" in attributes:
                base_href = _attr(attributes, "href")
    declared.append(http_language.split(",")[0] if http_language else "")
    base = url if base_href is None else canonicalize(base_href, url) or url
    canonical = next((c for c in (canonicalize(h, base) for h in canonical_hrefs) if c), "")
    return Head(metas, descriptions, keywords, declared, refresh, charset, base, canonical,
                title)
