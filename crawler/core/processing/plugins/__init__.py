"""Indexing plugins: code a deployment adds to page processing, between the processed page and
the index.

Layer: ``crawler.core.processing.plugins``. The seed's fetcher steps include "apply any indexing
plugins for the page processor to generate auxiliary summaries and/or modify the extracted summary";
Yioop's plugins return sub-documents (which inherit the page's language and links and have
their plugin's name as type) and edit the summary. Here a plugin is named by a dotted path in
the ``INDEXING_PLUGINS`` setting (a list, run in its order, as Scrapy's ``ITEM_PIPELINES``);
the fetcher's :class:`~crawler.core.processing.process.PageProcessor` loads them once per crawl
(:func:`load_plugins`) and runs them on every page it processes (:func:`apply_plugins`), after
the page processor, the summarizer, the scraper, the page rules and the meta words, before the
page becomes index documents (:mod:`crawler.core.processing.indexing`).

The interface (:class:`IndexingPlugin`):

* the dotted path names a class (made with no arguments, once per processor) or an object;
* ``name``: lower-case letters, digits and ``-``; the type of its sub-documents;
* ``process(page: PluginPage) -> PluginOutput | None``: ``page.page`` is the
  :class:`~crawler.core.processing.page.ProcessedPage` (title, description, ``body`` text,
  ``fields``, ``meta_words``, ``scraper``, ``mime_type``, ``lang``...) and ``page.body`` the page's
  bytes within the byte range (its markup). It returns what to add, or None. It is called from
  several threads at once: it must not change shared state. An exception is logged and recorded in
  the page's ``errors``; the page is indexed without that plugin's output.

What a :class:`PluginOutput` may add:

* ``regions``: texts indexed after the page's own, each with its region weight (relative to the
  page's sentences, which weigh about 1); their words are searchable like the page's
  (``ProcessedPage.terms`` and ``region_weights`` grow), but are not shown in snippets;
* ``meta_words``: ``prefix:value`` words (no spaces); a query can name one only when its prefix
  is in :data:`indexer.core.meta_vocabulary.META_PREFIXES` (``PLUGIN_PREFIXES`` there lists the
  shipped plugins');
* ``fields``: strings or numbers stored with the page's summary (``fields``);
* ``documents``: :class:`SubDocument` values, indexed as documents of their own
  (``DocType.SUBDOC``) at ``<page url>#<key>``, with the page's language, host and site meta
  words and their own title, text and meta words.

Shipped: :class:`crawler.core.processing.plugins.api_names.ApiNamesPlugin` (the API names a
documentation page defines, as a region and ``api:`` meta words).
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from crawler.core.processing.errors import ConfigError
from crawler.core.processing.page import EMPTY_MAP, ProcessedPage
from indexer.core.text import TermPositions, TextAnalyzer

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
MAX_REGION_CHARS = 200_000     # characters of one plugin region that are indexed
MAX_META_WORDS = 5000          # meta words one plugin adds to a page
MAX_DOCUMENTS = 1000           # sub-documents one plugin adds to a page
MAX_META_WORD_CHARS = 200


@dataclass(frozen=True, slots=True)
class PluginPage:
    """What a plugin reads: the processed page and its bytes within the byte range."""

    page: ProcessedPage
    body: bytes


@dataclass(frozen=True, slots=True)
class Region:
    """Text indexed after the page's own, its positions weighing ``weight``."""

    text: str
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class SubDocument:
    """A document a plugin makes from a page, indexed at ``<page url>#<key>``: ``key`` is
    unique among the plugin's sub-documents of the page (letters, digits, ``-_.:``). With
    ``record`` it is instead a unit of matching *of the page*: its title and text are filed
    under the page's url as one record, as a link's anchor text is (``DocType.LINK``, scored
    on its own length and added to the page's relevance, see
    ``crawler.core.processing.indexing.page_record``), not a result of its own."""

    key: str
    title: str
    text: str
    meta_words: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=lambda: EMPTY_MAP)
    record: bool = False


@dataclass(frozen=True, slots=True)
class PluginOutput:
    """What one plugin adds to one page (see the module docstring)."""

    regions: tuple[Region, ...] = ()
    meta_words: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=lambda: EMPTY_MAP)
    documents: tuple[SubDocument, ...] = ()


@dataclass(frozen=True, slots=True)
class PluginDocument:
    """A sub-document as the page carries it to indexing: the plugin's name and its
    document."""

    plugin: str
    document: SubDocument


@runtime_checkable
class IndexingPlugin(Protocol):
    """An indexing plugin (see the module docstring)."""

    name: str

    def process(self, page: PluginPage) -> PluginOutput | None: ...


# Modules of the shipped plugins that have moved, by the name a site's INDEXING_PLUGINS setting
# (its .env) may still give: issue 32 moved crawler.core.plugins under crawler.core.processing.
_MOVED_MODULES = {"crawler.core.plugins.api_names": "crawler.core.processing.plugins.api_names"}


def load_plugin(path: str) -> IndexingPlugin:
    """The plugin a dotted path names (``package.module.Name``): a class is made with no
    arguments. :class:`ConfigError` when it cannot be imported or is not a plugin. A shipped
    plugin's old module path still resolves (:data:`_MOVED_MODULES`)."""
    module_name, _, attribute = path.strip().rpartition(".")
    if not module_name:
        raise ConfigError(f"indexing plugin {path!r}: a dotted path module.Name is expected")
    module_name = _MOVED_MODULES.get(module_name, module_name)
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"indexing plugin {path!r} cannot be loaded: {exc}") from None
    plugin = target() if isinstance(target, type) else target
    if not isinstance(plugin, IndexingPlugin) or not _NAME.match(str(plugin.name)):
        raise ConfigError(f"indexing plugin {path!r} needs a name (lower-case letters, digits, "
                          "-) and a process(page) method")
    return plugin


def load_plugins(paths: Sequence[str]) -> tuple[IndexingPlugin, ...]:
    """The plugins of ``INDEXING_PLUGINS``, in order; a name given twice is refused."""
    plugins = tuple(load_plugin(p) for p in paths if p.strip())
    names = [p.name for p in plugins]
    if len(set(names)) != len(names):
        raise ConfigError(f"two indexing plugins have the same name: {names}")
    return plugins


def apply_plugins(page: ProcessedPage, body: bytes, plugins: Sequence[IndexingPlugin],
                  analyzer: TextAnalyzer) -> ProcessedPage:
    """``page`` with what each plugin adds, in order (a later plugin sees the earlier ones'
    additions). Never raises: a failing plugin is logged and named in ``errors``."""
    for plugin in plugins:
        try:
            output = plugin.process(PluginPage(page, body))
        except Exception as exc:  # a plugin's bug must not lose the page
            log.warning("indexing plugin %s failed on %s: %s", plugin.name, page.url, exc,
                        exc_info=True)
            page = replace(page, errors=(*page.errors,
                                         f"plugin {plugin.name}: {type(exc).__name__}: {exc}"))
            continue
        if output is not None:
            page = _merged(page, plugin.name, output, analyzer)
    return page


def _merged(page: ProcessedPage, name: str, output: PluginOutput,
            analyzer: TextAnalyzer) -> ProcessedPage:
    """``page`` with one plugin's output added."""
    changes: dict[str, Any] = {}
    regions = [r for r in output.regions if r.text.strip() and r.weight > 0]
    if regions:
        postings, ends = analyzer.positions((r.text[:MAX_REGION_CHARS] for r in regions),
                                            page.lang, start=page.length)
        # Only the regions' terms change (their positions follow the page's): a term of
        # both gains the regions' positions, and new terms come last, in the regions' order.
        terms = TermPositions.of(page.terms).followed_by(postings)
        weights = list(page.region_weights)
        previous = page.length
        for region, end in zip(regions, ends, strict=True):
            if end > previous:
                weights.append((end - 1, float(region.weight)))
            previous = end
        changes.update(terms=terms,
                       region_weights=tuple(weights), length=ends[-1])
    words = _clean_words(output.meta_words)
    if words:
        changes["meta_words"] = tuple(dict.fromkeys((*page.meta_words, *words)))
    if output.fields:
        changes["fields"] = MappingProxyType({**page.fields, **{
            str(k): v for k, v in output.fields.items() if isinstance(v, str | int | float)}})
    if output.documents:
        documents = [PluginDocument(name, d) for d in output.documents[:MAX_DOCUMENTS]
                     if d.key and (d.title.strip() or d.text.strip())]
        changes["subdocuments"] = (*page.subdocuments, *documents)
    return replace(page, **changes) if changes else page


def _clean_words(words: Sequence[str]) -> list[str]:
    """Meta words as the index takes them: ``prefix:value``, no spaces, bounded."""
    out = []
    for word in words[:MAX_META_WORDS]:
        word = str(word)
        prefix, colon, value = word.partition(":")
        if colon and prefix and value and " " not in word and len(word) <= MAX_META_WORD_CHARS:
            out.append(word)
    return out
