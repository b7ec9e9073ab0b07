"""What a page's sections are about and the terms it defines, as keys a whole query can match.

Layer: ``crawler.core.processing.plugins`` (an indexing plugin, see the package docstring). The
keys and why they are read are :mod:`indexer.core.signals.definitions`'s; the search gives a
page holding the key of the query a bonus (``ranking.core.shard.definitions``). Each label of
at least two key terms becomes the meta word ``topic:<key>``:

* the text of every heading (``h1`` to ``h6``; section numbers such as ``29.1.``, ``F.39.``
  or ``Chapter 27.`` and a permalink's ``¶`` left out);
* every term the page defines: HTML's ``<dfn>``, DocBook's ``firstterm`` (where a term is
  introduced in the running text) and a glossary entry's term (Sphinx's ``<dt
  id="term-...">``, DocBook's ``<dt>`` holding a ``glossterm``).

Text in parentheses is left out of a label ("Aggregate function (routine)", "pg_sleep()"): it
qualifies the label, and a query does not repeat it. The markup is read by regular
expressions (no second parse), each run only on a page holding its literal mark, as
:mod:`~crawler.core.processing.plugins.api_names` reads its anchors. The names a page defines
are that plugin's (``defines:`` keys).
"""

from __future__ import annotations

import html
import re

from crawler.core.processing.plugins import PluginOutput, PluginPage
from indexer.core.signals.definitions import TOPIC, definition_key
from indexer.core.text import TextAnalyzer

HTML_TYPES = ("text/html", "application/xhtml+xml")
MAX_LABEL_CHARS = 300
MAX_KEYS = 2000      # meta words one page gets from this plugin (the plugins' bound is 5000)
MIN_TERMS = 2        # a one-word heading ("Examples") is on too many pages to tell them apart

_HEADING = re.compile(rb"<h[1-6]\b[^>]{0,300}>(.{0,2000}?)</h[1-6]\s*>", re.IGNORECASE | re.DOTALL)
# (the literal mark a page must hold, the pattern, the group holding the label)
_DFN = (b"<dfn", re.compile(rb"<dfn\b[^>]{0,300}>(.{0,500}?)</dfn\s*>",
                            re.IGNORECASE | re.DOTALL))
_FIRSTTERM = (b"firstterm", re.compile(rb"""class\s*=\s*["']firstterm["'][^>]{0,200}>"""
                                       rb"""(.{0,500}?)</(?:em|span|i|b|dfn)\s*>""",
                                       re.IGNORECASE | re.DOTALL))
_SPHINX_TERM = (b"term-", re.compile(rb"""<dt\s[^>]{0,200}?\bid\s*=\s*["']term-[^"'<>]{0,200}["']"""
                                     rb"""[^>]{0,200}>(.{0,800}?)</dt\s*>""",
                                     re.IGNORECASE | re.DOTALL))
_GLOSSTERM = (b"glossterm", re.compile(rb"""<dt\b[^>]{0,300}>\s*<span\b[^>]{0,100}?\bclass\s*=\s*"""
                                       rb"""["']glossterm["'][^>]{0,100}>(.{0,500}?)</span\s*>""",
                                       re.IGNORECASE | re.DOTALL))
_TERMS = (_DFN, _FIRSTTERM, _SPHINX_TERM, _GLOSSTERM)
_PERMALINK = re.compile(rb"""<a\b[^>]{0,300}?\bclass\s*=\s*["'][^"']{0,60}headerlink[^"']{0,60}["']"""
                        rb"""[^>]{0,300}>.{0,40}?</a\s*>""", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_PARENTHESES = re.compile(r"\([^()]{0,200}\)")
_NUMBER = re.compile(r"^(?:(?:chapter|part|appendix|section)\s+)?"
                     r"(?:(?:[A-Z]\.)?\d+(?:\.\d+)*\.?|[A-Z]\.|[IVXLC]+\.)\s+", re.IGNORECASE)


def label_text(markup: bytes) -> str:
    """The words of a label's markup: a permalink, tags, a leading section number and text in
    parentheses out, entities decoded, spaces collapsed."""
    if b"headerlink" in markup:
        markup = _PERMALINK.sub(b" ", markup)
    text = _TAG.sub(" ", markup.decode("utf-8", "replace"))
    text = html.unescape(text).replace("\u00b6", " ")
    text = " ".join(_PARENTHESES.sub(" ", text).split())[:MAX_LABEL_CHARS]
    return _NUMBER.sub("", text, count=1)


def headings(markup: bytes) -> list[str]:
    """The text of every heading of ``markup``, in order (:func:`label_text`)."""
    return [label_text(m.group(1)) for m in _HEADING.finditer(markup)]


def defined_terms(markup: bytes) -> list[str]:
    """The terms ``markup`` defines (see the module docstring), by kind then in order."""
    return [label_text(m.group(1)) for mark, pattern in _TERMS if mark in markup
            for m in pattern.finditer(markup)]


class TopicsPlugin:
    """The indexing plugin (``crawler.core.processing.plugins.topics.TopicsPlugin``)."""

    name = "topic"

    def __init__(self) -> None:
        self.analyzer = TextAnalyzer()  # per thread inside: safe to share between threads

    def keys(self, markup: bytes, lang: str) -> list[str]:
        """The ``topic:`` meta words of a page's markup, each once, at most
        :data:`MAX_KEYS`."""
        stop = self.analyzer.stop_terms(lang)
        words: dict[str, None] = {}
        for label in (*headings(markup), *defined_terms(markup)):
            key = definition_key(self.analyzer.terms(label, lang), stop, MIN_TERMS)
            if key is not None:
                words.setdefault(f"{TOPIC}:{key}", None)
                if len(words) >= MAX_KEYS:
                    break
        return list(words)

    def process(self, page: PluginPage) -> PluginOutput | None:
        """The keys of an indexable HTML page as meta words; None for other pages and pages
        with none."""
        if page.page.mime_type not in HTML_TYPES or not page.page.indexable:
            return None
        words = self.keys(page.body, page.page.lang)
        return PluginOutput(meta_words=tuple(words)) if words else None
