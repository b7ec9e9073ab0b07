"""A crawl's link records, read from its IndexDocumentBundles; where crawls and graphs live.

Layer: ``ranking.core.linkgraph`` (uses ``indexer.core.reader``). The glue passes in the work
directory; nothing here reads settings.

Layout: a crawl with timestamp ``ts`` wrote one bundle per queue server at
``<work>/qs<n>/IndexData<ts>/``. Its link analysis lives in ``<work>/linkgraph/<ts>/``:
``webgraph/`` (the stored :class:`.graph.WebGraph`) and ``scores.npz`` (see :mod:`.scores`).

What a bundle gives (see ``crawler.core.indexing``):

* page documents (doc type 0) and redirect documents (doc type 2): the summary's ``url``,
  ``fetched_at`` and ``links`` (``[[target, anchor], ...]``) are the page's own outlinks, the
  most direct source. A redirect's ``location`` is one of its links (added, with empty anchor
  text, if the processor did not list it: a redirect passes its score on) and is reported in
  :attr:`CrawlLinks.redirects`.
* link documents (doc type 1), filed under the target, with ``source`` and the anchor text in
  ``description``. They are used only for sources that have no page document (pages that
  forbade indexing still pass on their links); their fetch time is unknown (0), so a page
  document of the same source always wins.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from indexer.core.ids import DOC_TYPE, DocType
from indexer.core.reader import IndexBundleReader

from .builder import PageLinks, page_links
from .errors import GraphNotFound

logger = logging.getLogger(__name__)

LINKGRAPH_DIR = "linkgraph"
GRAPH_DIR = "webgraph"
SCORES_FILE = "scores.npz"
_BUNDLE = re.compile(r"^IndexData(\d+)$")
_QS = re.compile(r"^qs(\d+)$")


def crawl_bundles(work_dir: str | os.PathLike[str], timestamp: int) -> list[Path]:
    """The bundle folders of crawl ``timestamp``, one per queue server, in server order."""
    work = Path(work_dir)
    found = []
    for qs in sorted(work.glob("qs*"), key=lambda p: (len(p.name), p.name)):
        if _QS.match(qs.name) and (qs / f"IndexData{timestamp}").is_dir():
            found.append(qs / f"IndexData{timestamp}")
    return found


def crawl_timestamps(work_dir: str | os.PathLike[str]) -> list[int]:
    """Timestamps of every crawl that has a bundle under ``work_dir``, ascending."""
    stamps = set()
    for qs in Path(work_dir).glob("qs*/IndexData*"):
        match = _BUNDLE.match(qs.name)
        if match and _QS.match(qs.parent.name) and qs.is_dir():
            stamps.add(int(match.group(1)))
    return sorted(stamps)


def newest_crawl(work_dir: str | os.PathLike[str]) -> int:
    stamps = crawl_timestamps(work_dir)
    if not stamps:
        raise GraphNotFound(f"no crawl bundles under {work_dir}")
    return stamps[-1]


def graph_dir(work_dir: str | os.PathLike[str], timestamp: int) -> Path:
    return Path(work_dir) / LINKGRAPH_DIR / str(timestamp) / GRAPH_DIR


def scores_path(work_dir: str | os.PathLike[str], timestamp: int) -> Path:
    return Path(work_dir) / LINKGRAPH_DIR / str(timestamp) / SCORES_FILE


def bundle_scores_path(bundle: str | os.PathLike[str]) -> Path | None:
    """The scores file of the crawl a bundle folder (``<work>/qs<n>/IndexData<ts>``) belongs
    to, or None when the folder is not laid out that way."""
    bundle = Path(bundle)
    match = _BUNDLE.match(bundle.name)
    if match is None or not _QS.match(bundle.parent.name):
        return None
    return scores_path(bundle.parent.parent, int(match.group(1)))


@dataclass(slots=True)
class CrawlLinks:
    """What :func:`read_bundle_links` found: fetch records and redirects (url -> location)."""

    records: list[PageLinks] = field(default_factory=list)
    redirects: dict[str, str] = field(default_factory=dict)
    documents: int = 0


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
        merged.documents += shard.documents
    out = CrawlLinks(redirects=merged.redirects, documents=merged.documents)
    pages = merged.pages
    for source, links in merged.orphans.items():
        if source not in pages:
            pages[source] = PageLinks(source, 0.0, tuple(links))
    out.records = list(pages.values())
    return out


def iter_members(reader: IndexBundleReader) -> Iterator[tuple[int, bytes]]:
    """(doc type, doc id) of every page, link and redirect document stored in ``reader``'s
    bundle, each doc id once (its newest copy). Shared by the readers of a crawl's bundles
    (link records here, common phrases in :mod:`ranking.core.phrases`)."""
    seen: set[bytes] = set()
    for part in reversed(reader.partitions):  # newest first: a re-stored doc_id is read once
        dm = reader.doc_map(part.number)
        types = dm.member_ids[:, DOC_TYPE]
        for row in range(dm.m):
            doc_type = int(types[row])
            if doc_type > DocType.LOCATION:
                continue
            doc_id = dm.member_ids[row].tobytes()
            if doc_id in seen:
                continue
            seen.add(doc_id)
            yield doc_type, doc_id


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
        for doc_type, doc_id in iter_members(reader):
            out.documents += 1
            if progress is not None and (done + out.documents) % 1000 == 0:
                progress(done + out.documents)
            summary = reader.summary(doc_id)
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
