"""A crawl's link records, read from its IndexDocumentBundles.

Layer: ``linkgraph.core`` (uses ``indexer.core.bundle.reader``). Where a crawl's bundles, graph and
score file live is :mod:`indexer.core.runtime.workdir`'s to say; nothing here reads settings.

What a bundle gives (see ``crawler.core.processing.indexing``):

* page documents (doc type 0) and redirect documents (doc type 2): the summary's ``url``,
  ``fetched_at`` and ``links`` (``[[target, anchor], ...]``) are the page's own outlinks, the
  most direct source. A redirect's ``location`` is one of its links (added, with empty anchor
  text, if the processor did not list it: a redirect passes its score on) and is reported in
  :attr:`CrawlLinks.redirects`.
* page documents' ``simhash`` and ``canonical`` (near-duplicates,
  :mod:`indexer.core.signals.near_clusters`): :attr:`ShardLinks.signatures`.
* link documents (doc type 1), filed under the target, with ``source`` and the anchor text in
  ``description``. They are used only for sources that have no page document (pages that
  forbade indexing still pass on their links); their fetch time is unknown (0), so a page
  document of the same source always wins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from indexer.core.bundle.member_scan import iter_member_summaries
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import DocType
from indexer.core.signals.simhash import NO_SIMHASH, from_hex, title_key

from .builder import PageLinks, page_links

logger = logging.getLogger(__name__)

@dataclass(slots=True)
class CrawlLinks:
    """What :func:`read_bundle_links` found: fetch records and redirects (url -> location)."""

    records: list[PageLinks] = field(default_factory=list)
    redirects: dict[str, str] = field(default_factory=dict)
    documents: int = 0
    # url -> (SimHash, declared canonical, title key) of each page that has a SimHash
    signatures: dict[str, tuple[int, str, str]] = field(default_factory=dict)


@dataclass(slots=True)
class ShardLinks:
    """One shard's link records before they are merged with the other shards' (see
    :func:`merge_shard_links`): what a queue server sends over the network
    (:mod:`.transfer`).

    ``pages``: the newest page (or redirect) record of each url stored in the shard;
    ``orphans``: the outlinks of sources known only from link documents, ``(target, anchor)``
    in stored order. Link documents are filed under their *target's* queue server, so the
    source's own page record is often in another shard: orphans are kept apart until every
    shard is merged, and used only for sources no shard has a page record of.
    """

    pages: dict[str, PageLinks] = field(default_factory=dict)
    orphans: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    documents: int = 0
    signatures: dict[str, tuple[int, str, str]] = field(default_factory=dict)

    def add_page(self, record: PageLinks) -> None:
        """Keep ``record`` unless the shard already has a newer one of its url (a later
        record of the same age wins, as a later bundle does)."""
        current = self.pages.get(record.url)
        if current is None or current.fetched_at <= record.fetched_at:
            self.pages[record.url] = record


def merge_shard_links(shards: list[ShardLinks]) -> CrawlLinks:
    """The crawl's fetch records from every shard's (in server order): for each url the
    newest page record; orphan links only for sources without one, gathered from every shard.
    """
    merged = ShardLinks()
    for shard in shards:
        for record in shard.pages.values():
            merged.add_page(record)
        for source, links in shard.orphans.items():
            merged.orphans.setdefault(source, []).extend(links)
        merged.redirects.update(shard.redirects)
        merged.signatures.update(shard.signatures)
        merged.documents += shard.documents
    out = CrawlLinks(redirects=merged.redirects, documents=merged.documents,
                     signatures=merged.signatures)
    pages = merged.pages
    for source, links in merged.orphans.items():
        if source not in pages:
            pages[source] = PageLinks(source, 0.0, tuple(links))
    out.records = list(pages.values())
    return out


def count_documents(bundles: list[Path]) -> int:
    """Stored members of every bundle (for a progress bar's total)."""
    total = 0
    for path in bundles:
        with IndexBundleReader(path) as reader:
            total += sum(reader.doc_map(p.number).m for p in reader.partitions)
    return total


def read_shard_links(bundle: Path, progress: Callable[[int], None] | None = None,
                     done: int = 0) -> ShardLinks:
    """The link records stored in one bundle (one queue server's shard of a crawl).

    ``progress`` is called with ``done`` plus the number of documents read so far, every
    1000 documents.
    """
    out = ShardLinks()
    with IndexBundleReader(bundle) as reader:
        for doc_type, _, summary in iter_member_summaries(reader):
            out.documents += 1
            if progress is not None and (done + out.documents) % 1000 == 0:
                progress(done + out.documents)
            if not summary:
                continue
            url = summary.get("url")
            if not url:
                continue
            if doc_type == DocType.LINK:
                source = summary.get("source")
                if source:
                    out.orphans.setdefault(source, []).append(
                        (url, summary.get("description") or ""))
                continue
            fingerprint = from_hex(summary.get("simhash"))
            if fingerprint != NO_SIMHASH and doc_type == DocType.PAGE:
                out.signatures[url] = (fingerprint, str(summary.get("canonical") or ""),
                                       title_key(str(summary.get("title") or "")))
            links = list(summary.get("links") or [])
            location = summary.get("location")
            if location and location != url:
                out.redirects[url] = location
                if not any(pair and pair[0] == location for pair in links):
                    links.append([location, ""])
            out.add_page(page_links(url, summary.get("fetched_at"), links))
    return out


def read_bundle_links(bundles: list[Path],
                      progress: Callable[[int], None] | None = None) -> CrawlLinks:
    """Fetch records of every page (and link-only source) stored in ``bundles``: each
    bundle's :func:`read_shard_links`, merged by :func:`merge_shard_links`.

    ``progress`` is called with the number of documents read so far, every 1000 documents.
    """
    shards: list[ShardLinks] = []
    done = 0
    for path in bundles:
        shards.append(read_shard_links(path, progress, done))
        done += shards[-1].documents
    out = merge_shard_links(shards)
    if progress is not None:
        progress(out.documents)
    logger.info("read %d documents from %d bundles: %d link records, %d redirects",
                out.documents, len(bundles), len(out.records), len(out.redirects))
    return out
