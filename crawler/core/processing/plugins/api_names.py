"""The API names a documentation page defines, indexed as a region of their own and as ``api:``
meta words.

Layer: ``crawler.core.processing.plugins`` (an indexing plugin, see the package docstring). A
reference page is the answer to a query naming what it defines (``fcntl.fcntl``,
``Bdb.dispatch_exception``, ``CACHES``, ``lc_collate``), but its text names a great many other
things too, and other pages name the same thing in passing. Documentation generators mark each
definition with an anchor whose id is the defined name; this plugin reads those anchors from the
page's markup:

* Sphinx and docutils object descriptions: a ``<dt>`` whose id is a dotted identifier
  (``os.path.join``, ``celery.beat.Scheduler.schedule``, ``c.PyFloat_CheckExact``);
* Sphinx module targets, ``id="module-sphinx.builders.xml"``;
* Sphinx and Django cross-reference targets of settings, environment variables, configuration
  values, template tags and filters and field lookups (``id="std-setting-CACHES"``,
  ``id="envvar-PYTHONPATH"``, ``id="confval-html_theme"``);
* DocBook's configuration parameters (PostgreSQL): a ``<dt id="GUC-...">`` whose term is a
  ``<code class="varname">``.

Each name defined goes, once, into a region of the page (weight :data:`REGION_WEIGHT`), so
that the words of the names a page defines count more there than the same words mentioned on
other pages, and becomes the meta word ``api:<name>`` (lower case): ``api:os.path.join`` finds
the page that defines ``os.path.join``. Only the anchors are read (one pass of regular
expressions over the markup, no second parse), so the cost is small beside the page processor's.
The names a page merely uses (its ``<code>`` and ``<pre>`` text) are left out: they are in the
page's text already, and most of them name what other pages define.

Each name is also a key a whole query matches (:mod:`indexer.core.signals.definitions`): the
meta word ``defines:<name>`` (lower case), and of its last two and last three components when
it is dotted (``Persistent.merge`` asks for ``celery.worker.state.Persistent.merge``); the
search gives the page holding the key of a one-word query a bonus
(``ranking.core.shard.definitions``).
"""

from __future__ import annotations

import html
import re

from crawler.core.processing.plugins import PluginOutput, PluginPage, Region
from indexer.core.signals.definitions import DEFINES, name_key

# relative to the page's sentences (about 1 on average); 4, as a title's: on the dev
# judgments 1 and 4 measured alike, 2 and 8 a little lower (within the crawls' noise)
REGION_WEIGHT = 4.0
MAX_NAMES = 2000
MAX_NAME_CHARS = 150
SUFFIXES = (2, 3)  # trailing components of a dotted name that are ``defines:`` keys too
MAX_KEYS = 2500    # ``defines:`` keys of one page (with the ``api:`` words, within 5000)
HTML_TYPES = ("text/html", "application/xhtml+xml")

_DT_ID = re.compile(rb"""<dt\b[^>]{0,300}?\bid\s*=\s*["']([A-Za-z_][\w.:]{0,149})["']""",
                    re.IGNORECASE)
# These two start at the literal "id" (the regular expression engine then skips ahead to each
# "id" in the markup, some fifteen times faster than trying a word boundary at every byte); the
# boundary before it is checked on each match (_at_word_start).
_MODULE_ID = re.compile(rb"""id\s*=\s*["']module-([A-Za-z_][\w.]{0,149})["']""")
_TARGET_ID = re.compile(
    rb"""id\s*=\s*["'](?:std-)?(?:setting|envvar|confval|templatetag|templatefilter|"""
    rb"""fieldlookup)-([^"'<>\s]{1,150})["']""")
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_GUC = re.compile(rb"""<dt\b[^>]{0,200}?\bid\s*=\s*["']GUC-[^"']{1,100}["'][^>]{0,200}>\s*"""
                  rb"""(?:<span\b[^>]{0,100}>\s*)?<code\b[^>]{0,100}\bclass\s*=\s*["']varname["']"""
                  rb"""[^>]{0,100}>([^<]{1,150})</code>""", re.IGNORECASE)
_GENERATED_ID = re.compile(r"^id\d+$")
# (pattern, whether its match must begin a word)
_PATTERNS = ((_DT_ID, False), (_MODULE_ID, True), (_TARGET_ID, True), (_GUC, False))


def defined_names(markup: bytes) -> list[str]:
    """The names ``markup`` defines, in the order of the patterns then of the page, each once
    (see the module docstring)."""
    names: dict[str, None] = {}
    for pattern, at_word in _PATTERNS:
        for match in pattern.finditer(markup):
            if at_word and not _at_word_start(markup, match.start()):
                continue
            name = html.unescape(match.group(1).decode("utf-8", "replace")).strip()
            if name and not _GENERATED_ID.match(name) and len(name) <= MAX_NAME_CHARS:
                names.setdefault(name, None)
                if len(names) >= MAX_NAMES:
                    return list(names)
    return list(names)


def name_labels(name: str) -> list[str]:
    """A defined name and, when dotted, its last :data:`SUFFIXES` components."""
    parts = name.split(".")
    return [name, *(".".join(parts[-k:]) for k in SUFFIXES if len(parts) > k)]


def _at_word_start(markup: bytes, start: int) -> bool:
    """Whether a match at ``start`` begins a word (``\\b`` before it: no letter, digit or
    underscore just before)."""
    return start == 0 or markup[start - 1] not in _WORD_BYTES


class ApiNamesPlugin:
    """The indexing plugin (``crawler.core.processing.plugins.api_names.ApiNamesPlugin``)."""

    name = "api"

    @staticmethod
    def keys(names: list[str]) -> list[str]:
        """The ``defines:`` meta words of ``names`` (see the module docstring), each once."""
        keys: dict[str, None] = {}
        for label in (x for name in names for x in name_labels(name)):
            key = name_key(label)
            if key is not None:
                keys.setdefault(f"{DEFINES}:{key}", None)
                if len(keys) >= MAX_KEYS:
                    break
        return list(keys)

    def process(self, page: PluginPage) -> PluginOutput | None:
        """A region, ``api:`` and ``defines:`` meta words of the names an HTML page defines;
        None for other pages and pages that define nothing."""
        if page.page.mime_type not in HTML_TYPES or not page.page.indexable:
            return None
        names = defined_names(page.body)
        if not names:
            return None
        words = tuple(f"api:{'_'.join(n.lower().split())}" for n in names)
        return PluginOutput(regions=(Region(" \n".join(names), REGION_WEIGHT),),
                            meta_words=(*words, *self.keys(names)))
