"""From processed pages to the index's documents: the fetcher's mini inverted index.

Layer: ``crawler.core`` (uses ``indexer.core.documents.document``, the contract with the index). A batch of
:func:`to_index_documents` results is what a fetcher ships to a queue server: every document
already carries its terms with positions, so the queue server only merges.

Per processed page:

* the page document (``DocType.PAGE``, or ``DocType.LOCATION`` for redirects), unless robot
  metas forbid indexing (NOINDEX, NONE, JUSTFOLLOW); its cached page only when archiving is
  allowed;
* the indexing plugins' sub-documents of the page (``DocType.SUBDOC``, :func:`subdocument`),
  when the page is indexable;
* one ``DocType.LINK`` document per kept outlink that has useful text: url = the link target,
  text = the anchor text, terms from that text (analysed in the page's language).

The words of a page's title and of each anchor text are also posted as ``fancy:<term>`` meta
words (``indexer.core.documents.document.fancy_words``): the short barrel search reads first. Its text hash
  is the hash of ``url|<target>|text|<anchor>|<eref or iref>|<source>`` (as Yioop names link
  records), so each (source, target, text) is its own document.

Anchor fields (seed 002's AnchorFields, issue 8): a link document is made with region weight 1;
the index writer multiplies it by ``1 + log10(1 + r)``, ``r`` the source page's relative
LinkRank, each time it builds a partition from the crawl's newest link scores
(:mod:`indexer.core.partition.anchors`), finding the source in the link document's
``source:<url>`` meta word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from types import MappingProxyType
from typing import Any
from urllib.parse import quote

from crawler.core.processing.meta_words import lang_words, safe_words, site_words
from crawler.core.processing.page import Link, ProcessedPage
from crawler.core.processing.plugins import PluginDocument
from indexer.core.documents.document import IndexDocument, fancy_words
from indexer.core.ids import DocType, hash7
from indexer.core.signals.simhash import to_hex
from indexer.core.text import TextAnalyzer, term_positions
from indexer.core.urls import host_of

LINK_KINDS_WITHOUT_DOCUMENT = frozenset({"location", "sitemap", "robots"})
# Text that quote() changes only by spelling spaces %20 (unreserved characters, "/", " ").
_QUOTE_SAFE = re.compile(r"[A-Za-z0-9_.~/ \-]*\Z")
# The host of a URL in canonical form (lower-case host, optional port): host_of's answer.
_CANONICAL_HOST = re.compile(r"https?://([a-z0-9.\-_]+)(?::[0-9]*)?(?=[/?#]|\Z)")


def _host(url: str) -> str:
    match = _CANONICAL_HOST.match(url)
    return match.group(1).rstrip(".") if match else host_of(url)


def page_summary(page: ProcessedPage) -> dict[str, Any]:
    """The JSON-serialisable summary stored with a page document, its keys in this order:
    ``url`` and ``title`` first (the search reads them from the head of the stored summary),
    then the description and the other small fields, then the page's whole indexed text,
    ``body``, only when there is one (not in the "summary only" profile, not under
    NOSNIPPET), and the outlinks, ``links``, always last. A search reads a summary only up to
    its body (its snippets need the keys before it, never the links) and inflates the body only
    for a result whose description lacks the query's words, never past its end (the body's
    closing quote is the first ``","links":[`` in the stored JSON: a JSON string's own quotes
    are escaped) (``ranking.core.display.summary``)."""
    summary: dict[str, Any] = {
        "url": page.url,
        "title": page.title,
        "description": page.description if page.snippetable else "",
        "lang": page.lang,
        "mime_type": page.mime_type,
        "status": page.status,
        "media": page.media,
        "size": page.size,
        "fetched_at": page.fetched_at,
        "keywords": list(page.keywords),
        "robot_metas": sorted(page.robot_metas),
        "location": page.location,
        "scraper": page.scraper,
        "fields": {k: v for k, v in page.fields.items() if isinstance(v, str | int | float)},
        "safe": page.safe,
        "content_hash": page.content_hash.hex(),
        # near-duplicates (indexer.core.signals.near_clusters): the SimHash of the text without
        # furniture, and the rel=canonical the page declares
        "simhash": to_hex(page.simhash),
        "canonical": page.canonical,
        # what an archive crawl or a WARC export needs to process the cached page again as it
        # was fetched (crawler.core.archive): the response headers processing reads, the address
        "headers": dict(page.headers),
        "ip": page.ip,
    }
    if page.snippetable and page.body:
        summary["body"] = page.body  # before the links: see above
    summary["links"] = [[link.url, link.text] for link in page.links]  # last: see above
    return summary


def link_document(
    page: ProcessedPage, link: Link, analyzer: TextAnalyzer
) -> IndexDocument | None:
    """The link document of one outlink, or None when the link has no useful text."""
    if not link.text or link.kind in LINK_KINDS_WITHOUT_DOCUMENT:
        return None
    terms = analyzer.terms(link.text, page.lang)
    if not terms:
        return None
    target_host = _host(link.url)
    relation = "iref" if target_host == page.host else "eref"
    text = link.text.replace(" ", "%20") if _QUOTE_SAFE.match(link.text) else quote(link.text)
    link_id = f"url|{link.url}|text|{text}|{relation}|{page.url}"
    positions = term_positions(terms)
    meta = site_words(target_host) + lang_words(page.lang) + safe_words(page.safe)
    meta += ["link:all", f"link:{link.url}", f"source:{page.url}", *fancy_words(terms)]
    return IndexDocument(
        url=link.url,
        host=target_host,
        doc_type=DocType.LINK,
        text_hash=hash7(link_id),
        summary=MappingProxyType({
            "url": link.url,
            "title": link.url,
            "description": link.text,
            "source": page.url,
            "lang": page.lang,
            "kind": link.kind,
            "relation": relation,
        }),
        terms=MappingProxyType({t: tuple(p) for t, p in positions.items()}),
        length=len(terms),
        meta_words=tuple(dict.fromkeys(meta)),
        region_weights=((len(terms) - 1, 1.0),),
    )


def page_record(page: ProcessedPage, made: PluginDocument,
                analyzer: TextAnalyzer) -> IndexDocument | None:
    """A plugin's record of ``page`` (``SubDocument.record``: a section's heading and lead,
    :mod:`crawler.core.processing.plugins.sections`): a ``DocType.LINK`` document filed under
    the page's own url, so that the index folds it into the page's doc_map entry beside the
    anchor text of the links to the page and the search scores it on its own length
    (``ranking.core.scoring.formulas.record_relevance``). Its summary names the record's
    anchor (``<page url>#<key>``) and plugin; it has no ``link:`` or ``source:`` meta word
    (the page does not link to itself, and no link score weighs it). None without words."""
    doc = made.document
    text = " ".join(part for part in (doc.title, doc.text) if part)
    terms = analyzer.terms(text, page.lang)
    if not terms:
        return None
    anchor = f"{page.url}#{doc.key}"
    meta = site_words(page.host) + lang_words(page.lang) + safe_words(page.safe)
    meta += [f"{made.plugin}:all", *fancy_words(terms)]
    return IndexDocument(
        url=page.url,
        host=page.host,
        doc_type=DocType.LINK,
        text_hash=hash7(f"record|{made.plugin}|{anchor}|{text}"),
        summary=MappingProxyType({
            "url": page.url,
            "title": page.url,
            "description": text,
            "anchor": anchor,
            "lang": page.lang,
            "kind": made.plugin,
            "relation": "record",
        }),
        terms=MappingProxyType({t: tuple(p) for t, p in term_positions(terms).items()}),
        length=len(terms),
        meta_words=tuple(dict.fromkeys(meta)),
        region_weights=((len(terms) - 1, 1.0),),
    )


# meta words of a page that its sub-documents share (the others name the page itself)
_SHARED_META = ("site:", "path:", "filetype:", "lang:", "media:", "code:", "date:", "modified:",
                "safe:", "server:", "ip:")


def subdocument(page: ProcessedPage, made: PluginDocument,
                analyzer: TextAnalyzer) -> IndexDocument | None:
    """The index document of a plugin's sub-document of ``page``: at ``<page url>#<key>``,
    type ``DocType.SUBDOC``, its title and text indexed (the title's region first, weighing
    as a page title does), with the page's language, and the page's site, path, language,
    date and safe-search meta words, ``<plugin>:all``, ``info:`` of its url and its own meta
    words. None when it has no words."""
    doc = made.document
    url = f"{page.url}#{doc.key}"
    postings, ends = analyzer.positions((doc.title, doc.text), page.lang)
    if not postings:
        return None
    weights = [(ends[0] - 1, page.region_weights[0][1] if page.region_weights else 1.0)]
    if ends[1] > ends[0]:
        weights.append((ends[1] - 1, 1.0))
    meta = [w for w in page.meta_words if w.startswith(_SHARED_META)]
    meta += [f"{made.plugin}:all", f"info:{url}", *doc.meta_words,
             *fancy_words(analyzer.terms(doc.title, page.lang))]
    return IndexDocument(
        url=url,
        host=page.host,
        doc_type=DocType.SUBDOC,
        text_hash=hash7(f"sub|{made.plugin}|{url}|{doc.title}|{doc.text}"),
        summary=MappingProxyType({
            "url": url,
            "title": doc.title,
            "description": doc.text,
            "lang": page.lang,
            "source": page.url,
            "subdoctype": made.plugin,
            "fields": {k: v for k, v in doc.fields.items() if isinstance(v, str | int | float)},
            "safe": page.safe,
        }),
        terms=postings,
        length=ends[-1],
        meta_words=tuple(dict.fromkeys(w for w in meta if w and " " not in w)),
        region_weights=tuple(weights),
    )


def to_index_documents(
    page: ProcessedPage, analyzer: TextAnalyzer | None = None
) -> list[IndexDocument]:
    """The page's document (if indexable) followed by its link documents."""
    return list(iter_index_documents(page, analyzer))


def iter_index_documents(
    page: ProcessedPage, analyzer: TextAnalyzer | None = None
) -> Iterator[IndexDocument]:
    """:func:`to_index_documents` one at a time: a fetcher encodes each as it comes, so a page
    with thousands of links never holds all its link documents at once."""
    analyzer = analyzer or TextAnalyzer()
    if page.indexable:
        yield (
            IndexDocument(
                url=page.url,
                host=page.host,
                doc_type=page.doc_type,
                text_hash=page.text_hash,
                summary=MappingProxyType(page_summary(page)),
                terms=page.terms,
                length=page.length,
                meta_words=page.meta_words + tuple(
                    fancy_words(analyzer.terms(page.title, page.lang))),
                region_weights=page.region_weights,
                classifier_scores=page.classifier_scores,
                cached_page=page.cached_page if page.archivable else None,
            )
        )
        for made in page.subdocuments:
            sub = page_record(page, made, analyzer) if made.document.record else \
                subdocument(page, made, analyzer)
            if sub is not None:
                yield sub
    for link in page.links:
        document = link_document(page, link, analyzer)
        if document is not None:
            yield document


def batch_documents(
    pages: Iterable[ProcessedPage], analyzer: TextAnalyzer | None = None
) -> list[IndexDocument]:
    """Index documents of a batch of pages, in order (the fetcher's mini inverted index)."""
    analyzer = analyzer or TextAnalyzer()
    documents: list[IndexDocument] = []
    for page in pages:
        documents.extend(to_index_documents(page, analyzer))
    return documents
