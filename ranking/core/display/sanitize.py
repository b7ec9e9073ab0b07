"""A stored web page made into HTML that cannot run script: the cached copy's last step.

Layer: ``ranking.core`` (pure Python). Used by the cached-page view's document
(:func:`ranking.cached.frame_document`), after the query words are highlighted, so that what
the browser receives is exactly what this module wrote.

Contract of :func:`sanitize_page`: the result is an HTML fragment (the page's body content)
serialised by Ammonia (``nh3``), which parses the input with html5ever, the HTML5 parsing
algorithm browsers use (foreign ``<svg>``/``<math>`` content, ``<noscript>``, ``<template>`` and
raw-text elements parsed as a browser would), keeps only the elements and attributes of an
allow-list and serialises the tree again, escaping every text node and attribute value. Even
opened on its own, with no sandbox and no Content-Security-Policy, it holds:

* no ``<script>``, ``<style>``, ``<iframe>``, ``<object>``, ``<embed>``, ``<svg>``, ``<math>``,
  ``<template>``, ``<title>``, ``<textarea>``, ``<select>``, ``<noembed>``, ``<noframes>`` or
  ``<xmp>``, nor their content; no ``<form>``, ``<input>``, ``<button>``, ``<base>``,
  ``<meta>``, ``<link>``, ``<frame>`` or unknown element (their children are kept as text and
  allowed elements);
* no event handler (``on*``) or any attribute outside :data:`ATTRIBUTES` and the ``data-`` and
  ``aria-`` families; ``style`` attributes reduced to the properties of :data:`STYLE_PROPERTIES`
  (colours, fonts, text and box layout; nothing that loads a url), and a ``style`` with a
  CSS escape, a comment or a function other than :data:`STYLE_FUNCTIONS` (``url()``,
  ``expression()``...) dropped whole;
* no url but ``http:``, ``https:``, ``mailto:``, relative ones (which the caller's ``<base>``
  resolves against the page's own url) and raster ``data:image/...`` in an ``<img src>``;
  any attribute whose value, read as a browser reads a url (tabs and newlines removed, control
  characters and spaces trimmed, case ignored), starts with a script scheme (``javascript:``,
  ``vbscript:``, ``livescript:``) or another ``data:`` is dropped;
* no comment.

What stays readable: text, headings, paragraphs, lists, tables, links (with
``rel="noopener noreferrer"``), images, ``<mark>`` and the inline styles above.
"""

from __future__ import annotations

import re

import nh3

TAGS = frozenset(nh3.ALLOWED_TAGS) | {"mark", "font", "section", "main", "address", "big"}
# removed with everything inside them: their content is code, or parsed unlike text elsewhere
DROPPED_WITH_CONTENT = frozenset({
    "script", "style", "template", "title", "svg", "math", "iframe", "object", "embed",
    "applet", "noembed", "noframes", "xmp", "plaintext", "textarea", "select", "frameset",
})
GENERIC_ATTRIBUTES = frozenset({"title", "lang", "dir", "class", "id", "style", "align"})
ATTRIBUTES: dict[str, frozenset[str]] = {
    **{tag: frozenset(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": GENERIC_ATTRIBUTES,
    "a": frozenset({"href", "hreflang", "name"}),
    "font": frozenset({"color", "size", "face"}),
    "li": frozenset({"value"}),
    "ol": frozenset({"start", "reversed", "type"}),
}
URL_SCHEMES = frozenset({"http", "https", "mailto", "data"})  # data: narrowed by the filter
STYLE_PROPERTIES = frozenset({
    "color", "background-color", "font-weight", "font-style", "font-size", "font-family",
    "font-variant", "text-align", "text-decoration", "text-transform", "text-indent",
    "letter-spacing", "word-spacing", "line-height", "white-space", "vertical-align",
    "margin", "margin-top", "margin-right", "margin-bottom", "margin-left",
    "padding", "padding-top", "padding-right", "padding-bottom", "padding-left",
    "border", "border-top", "border-right", "border-bottom", "border-left", "border-color",
    "border-style", "border-width", "border-collapse", "border-spacing", "border-radius",
    "width", "height", "max-width", "min-width", "max-height", "min-height",
    "display", "float", "clear", "list-style-type", "list-style-position", "table-layout",
})
STYLE_FUNCTIONS = frozenset({"rgb", "rgba", "hsl", "hsla", "calc"})
SCRIPT_SCHEMES = ("javascript:", "vbscript:", "livescript:")
_RASTER_DATA = re.compile(r"data:image/(?:png|gif|jpeg|jpg|webp|avif|bmp)[;,]")
_URL_NOISE = re.compile(r"[\t\n\r]")
_CSS_FUNCTION = re.compile(r"([a-z0-9_-]*)\s*\(")
_URL_EDGES = "".join(chr(c) for c in range(0x21))  # C0 controls and space, as browsers trim


def url_as_read(value: str) -> str:
    """``value`` as a browser reads it as a url before looking at its scheme: tabs and
    newlines removed anywhere, C0 controls and spaces trimmed at both ends, lower-cased."""
    return _URL_NOISE.sub("", value).strip(_URL_EDGES).lower()


def _safe_style(value: str) -> bool:
    """True when ``value`` (a ``style`` attribute) has no CSS escape, no comment and calls no
    function but :data:`STYLE_FUNCTIONS`: nothing that could spell ``url(`` or
    ``expression(`` some other way."""
    lowered = value.lower()
    if "\\" in lowered or "/*" in lowered:
        return False
    return all(name in STYLE_FUNCTIONS for name in _CSS_FUNCTION.findall(lowered))


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    """Keeps ``value`` unless it reads as a script url, or as a ``data:`` url anywhere but a
    raster image's ``<img src>``, or is an unsafe ``style`` (return ``None``: the attribute is
    dropped)."""
    if attribute == "style" and not _safe_style(value):
        return None
    read = url_as_read(value)
    if read.startswith(SCRIPT_SCHEMES):
        return None
    if read.startswith("data:") and not (tag == "img" and attribute == "src"
                                         and _RASTER_DATA.match(read)):
        return None
    return value


def _cleaner() -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=set(TAGS - DROPPED_WITH_CONTENT),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        attribute_filter=_attribute_filter,
        generic_attribute_prefixes={"data-", "aria-"},
        url_schemes=set(URL_SCHEMES),
        filter_style_properties=set(STYLE_PROPERTIES),
        strip_comments=True,
        link_rel="noopener noreferrer",
    )


def sanitize_page(markup: str) -> str:
    """``markup`` (a whole page or a fragment) as a fragment that runs no script (see the
    module docstring for what is kept). A cleaner is built for each call (a tenth of a
    millisecond), so no sanitiser state is shared between threads."""
    return _cleaner().clean(markup)
