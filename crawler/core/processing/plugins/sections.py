"""Sections as answers: each headed section of a long page, with its anchor, as a document of
its own (issue 36, item 2).

Layer: ``crawler.core.processing.plugins`` (an indexing plugin, see the package docstring). The
answer to a concept query ("replication slot", "table of contents", "transaction isolation")
is often one section of a long manual page whose title does not name it; the page's own
length then dilutes the section's words (DFR's length normalisation, as BM25's), and a short
page that names the words in passing comes first. Documentation search engines index one
record per heading, with the heading's anchor, for that reason (Algolia DocSearch's records
``lvl0..lvl6`` + content, Sphinx's own search index of section titles). Here each section of a
page with at least :data:`MIN_SECTIONS` headed sections becomes a sub-document
(``DocType.SUBDOC``) at ``<page url>#<anchor>``: its title is the heading's text (indexed as a
title region), its text the section's first :data:`MAX_WORDS` words up to the next heading. So
a section is matched and ranked on its own length, its heading counts as a title, and its
result links to the section (``#anchor``) whose snippet is its own text.

The anchor of a heading, in the markup the manuals use (one pass of regular expressions over
the markup, no second parse):

* the heading's own ``id`` (asciidoc: git's manuals);
* Sphinx's permalink inside it, ``<a class="headerlink" href="#set-types-set-frozenset">``;
* an empty anchor inside it, ``<a id="_the_shell_prompt"/>`` (DocBook: the Debian Reference);
* the ``id`` of the ``div``/``section`` that opens right before it with only tags between
  (DocBook: PostgreSQL's ``<div class="sect2" id="LOGICALDECODING-REPLICATION-SLOTS"><div
  class="titlepage"><div><div><h3>``; Sphinx 5's ``<section id=...>``).

``h1`` (the page's own title) and headings without an anchor are not sections; a section
with neither heading words nor text is left out, and so is a section that is mostly a list of
links (more than :data:`MAX_LINK_SHARE` of its text is anchor text: a back-of-book index's
letter, a table of contents), whose words are the anchor text of the pages it names.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace

from crawler.core.processing.plugins import PluginOutput, PluginPage, SubDocument

HTML_TYPES = ("text/html", "application/xhtml+xml")
MIN_SECTIONS = 2     # a page with fewer headed sections is its own answer
MAX_SECTIONS = 300   # sections made from one page
MAX_WORDS = 120      # words of a section's text indexed (the section's lead)
RECORD_WORDS = 0     # words of the lead in a section's record (0: the heading only)
MAX_HEADING_CHARS = 200
MAX_LINK_SHARE = 0.5  # a section whose text is more anchor text than this is a link list

_HEADING = re.compile(rb"<h([2-6])\b([^>]{0,300})>(.{0,3000}?)</h\1\s*>", re.IGNORECASE | re.DOTALL)
_OWN_ID = re.compile(rb"""\bid\s*=\s*["']([^"'<>\s]{1,150})["']""", re.IGNORECASE)
# Sphinx's permalink (not its "toc-backref" link, which points back at the table of contents)
_PERMALINK = re.compile(rb"""<a\b[^>]{0,200}?\bclass\s*=\s*["']headerlink["'][^>]{0,200}?"""
                        rb"""\bhref\s*=\s*["']#([^"'<>\s]{1,150})["']""", re.IGNORECASE)
_INNER_ANCHOR = re.compile(rb"""<a\b[^>]{0,100}?\b(?:id|name)\s*=\s*["']([^"'<>\s]{1,150})["']""",
                           re.IGNORECASE)
# the id of the div/section opening just before the heading, only tags between
_OPENER = re.compile(rb"""<(?:div|section)\b[^>]{0,200}?\bid\s*=\s*["']([^"'<>\s]{1,150})["']"""
                     rb"""[^>]{0,200}>(?:\s*<[^>]{0,200}>)*\s*\Z""", re.IGNORECASE)
_LOOK_BACK = 600
_TAG = re.compile(r"<[^>]*>")
_LINK_TEXT = re.compile(rb"<a\b[^>]*>(.*?)</a\s*>", re.IGNORECASE | re.DOTALL)
_DROP = re.compile(rb"<(script|style|pre)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_NUMBERING = re.compile(r"^(?:[A-Z]?\d+(?:\.\d+)*\.?|[IVX]+\.)\s+")
_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,150}$")


def _text(markup: bytes) -> str:
    """The words of a piece of markup: tags out, entities decoded, spaces collapsed."""
    text = _TAG.sub(" ", markup.decode("utf-8", "replace"))
    return " ".join(html.unescape(text).replace("\u00b6", " ").split())


def _anchor(markup: bytes, attributes: bytes, inner: bytes, start: int) -> str | None:
    """The anchor of the heading whose attributes, inner markup and start are given."""
    for found in (_OWN_ID.search(attributes), _PERMALINK.search(inner),
                  _INNER_ANCHOR.search(inner),
                  _OPENER.search(markup, max(0, start - _LOOK_BACK), start)):
        if found:
            key = html.unescape(found.group(1).decode("utf-8", "replace"))
            return key if _KEY.match(key) else None
    return None


def page_sections(markup: bytes) -> list[SubDocument]:
    """The headed sections of ``markup`` as sub-documents (see the module docstring); empty
    for a page with fewer than :data:`MIN_SECTIONS` of them."""
    headings = list(_HEADING.finditer(markup))
    sections: list[SubDocument] = []
    seen: set[str] = set()
    for i, match in enumerate(headings):
        key = _anchor(markup, match.group(2), match.group(3), match.start())
        if key is None or key in seen:
            continue
        title = _NUMBERING.sub("", _text(match.group(3)))[:MAX_HEADING_CHARS]
        end = headings[i + 1].start() if i + 1 < len(headings) else len(markup)
        body = _DROP.sub(b" ", markup[match.end():min(end, match.end() + 20 * 1024)])
        whole = _text(body)
        linked = sum(len(_text(m.group(1))) for m in _LINK_TEXT.finditer(body))
        if linked > MAX_LINK_SHARE * max(len(whole), 1):
            continue
        text = " ".join(whole.split()[:MAX_WORDS])
        if not (title or text):
            continue
        seen.add(key)
        sections.append(SubDocument(key, title, text, fields={"level": int(match.group(1))}))
        if len(sections) >= MAX_SECTIONS:
            break
    return sections if len(sections) >= MIN_SECTIONS else []


class SectionsPlugin:
    """The indexing plugin (``crawler.core.processing.plugins.sections.SectionsPlugin``)."""

    name = "section"

    def process(self, page: PluginPage) -> PluginOutput | None:
        """The sections of an indexable HTML page as sub-documents; None for other pages and
        pages with too few sections."""
        if page.page.mime_type not in HTML_TYPES or not page.page.indexable:
            return None
        sections = [replace(s, text=" ".join(s.text.split()[:RECORD_WORDS]), record=True)
                    for s in page_sections(page.body)]
        return PluginOutput(documents=tuple(sections)) if sections else None
