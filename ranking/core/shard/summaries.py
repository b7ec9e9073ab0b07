"""What a shard shows of its documents: stored summaries, their heads, redirect sources, and
the caches that keep them between queries.

Layer: ``ranking.core``. :class:`ShardSummaries` reads one bundle's stored summaries for
:class:`ranking.core.shard.local.LocalShard` (which shares its reader lock with it): a page's summary
says whether a cached copy is kept, a link document shows the page it points at (its ``info:``
meta word, as Yioop does), and summaries read for snippets stop before the page's whole text
(:class:`ranking.core.display.summary.StoredSummary`). Heads, summaries and redirect sources are kept
(:class:`ranking.core.shard.doc_cache.DocumentCache`, least used out) for the reader's lifetime, a
snapshot of the index.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.errors import CorruptIndexError
from indexer.core.ids import DOC_TYPE, DocType
from ranking.core.display.snippets import has_match, query_words, stored_body_windows
from ranking.core.display.summary import INFLATE_ERRORS, StoredSummary
from ranking.core.options import SearchOptions
from ranking.core.shard.doc_cache import DocumentCache

logger = logging.getLogger(__name__)
# a summary kept parsed: (the summary up to its body or None, whether a body follows, the id
# of the document whose member holds that body)
_KeptSummary = tuple[dict[str, Any] | None, bool, bytes | None]


class ShardSummaries:
    """Summaries of one bundle's documents, read under the shard's ``lock`` (a reader loads
    files lazily and shares file handles), at most ``head_cache`` heads and
    ``document_cache`` summaries and redirect-source lists kept."""

    def __init__(self, reader: IndexBundleReader, lock: threading.RLock, head_cache: int,
                 document_cache: int) -> None:
        self.reader = reader
        self.lock = lock
        self._heads: DocumentCache[bytes, tuple[dict[str, Any] | None]] = \
            DocumentCache(head_cache)
        # (doc id, read to the links) -> (summary to the body or None, whether a body follows,
        # the id of the member it was read from: the page's own, or for a link the page's)
        self._documents: DocumentCache[tuple[bytes, bool], _KeptSummary] = \
            DocumentCache(document_cache)
        self._redirects: DocumentCache[str, tuple[str, ...]] = DocumentCache(document_cache)

    def summaries(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Summaries of ``doc_ids``. For a link document (a group with no page among the
        candidates) the target page's summary is looked up through its ``info:`` meta word, as
        Yioop does; when the page was never indexed the summary says ``page_indexed: False``.
        A page's summary also says whether a cached copy is kept (``has_cache``)."""
        return self.snippet_summaries(doc_ids, (), None)

    def snippet_summaries(self, doc_ids: Sequence[bytes], words: Sequence[str],
                          options: SearchOptions | None) -> list[dict[str, Any] | None]:
        """:meth:`summaries` for snippets: never the page's whole text (``"body"``), which a
        summary read stops before (:class:`ranking.core.display.summary.StoredSummary`), but, for a
        page whose description holds none of the query ``words``, a ``"body_excerpt"``: the
        snippet windows of its body (:func:`ranking.core.display.snippets.stored_body_windows`), the
        body inflated only up to them. With ``options`` (a search making snippets) a page's
        summary is read only up to its outlinks (``"links"`` and the keys after them are not
        in it): the search shows none of them. Those summaries are kept parsed
        (:class:`ranking.core.shard.doc_cache.DocumentCache`, ``document_cache`` of them); a body
        excerpt is made for each query."""
        query = query_words(words) if options is not None else None
        until_links = options is not None
        with self.lock:
            out = []
            for doc_id in doc_ids:
                key = (doc_id, until_links)
                kept = self._documents.get(key)
                stored = None
                if kept is None:
                    stored, source = self._resolved_or_none(doc_id, until_links)
                    kept = (stored.summary, stored.has_body, source) if stored is not None \
                        else (None, False, None)
                    if until_links:  # never a summary with its outlinks (they can be long)
                        self._documents.put(key, kept)
                summary_kept, has_body, source = kept
                if summary_kept is None:
                    out.append(None)
                    continue
                summary = dict(summary_kept)
                if has_body and source is not None and query is not None and \
                        options is not None and \
                        not has_match(str(summary.get("description", "")), query):
                    try:  # the body of the page shown, read again from its own member
                        stored = stored or self._stored(source, until_links)
                        if stored is not None:
                            summary["body_excerpt"] = stored_body_windows(stored, words,
                                                                          options)
                    except (ValueError, *INFLATE_ERRORS) as exc:  # damaged: show the description
                        logger.warning("body of %s unreadable: %s", source.hex(), exc)
                out.append(summary)
            return out

    MAX_REDIRECT_SOURCES = 8  # redirect sources compared with a shown result's url

    def redirect_sources(self, url: str) -> tuple[str, ...]:
        """Urls whose redirect documents point at ``url`` (their ``location:`` meta word), at
        most MAX_REDIRECT_SOURCES, kept per url like summaries."""
        if not url:
            return ()
        with self.lock:
            return self._redirects.load(url, self._read_redirect_sources)

    def _read_redirect_sources(self, url: str) -> tuple[str, ...]:
        found: list[str] = []
        for block in self.reader.postings(f"location:{url}"):
            for index in block.doc_index.tolist():
                source, _ = self.reader.summary_head(block.partition, int(index))
                if source and source != url and source not in found:
                    found.append(source)
                if len(found) >= self.MAX_REDIRECT_SOURCES:
                    return tuple(found)
        return tuple(found)

    def _resolved_or_none(self, doc_id: bytes,
                          until_links: bool) -> tuple[StoredSummary | None, bytes | None]:
        """:meth:`_resolved`, or (None, None) when the document's stored member is damaged:
        one corrupt record costs only its own result, which is left out."""
        try:
            return self._resolved(doc_id, until_links)
        except CorruptIndexError as exc:
            logger.warning("summary of %s unreadable: %s", doc_id.hex(), exc)
            return None, None

    def _resolved(self, doc_id: bytes,
                  until_links: bool) -> tuple[StoredSummary | None, bytes | None]:
        """What a result shows of ``doc_id``: its stored summary (with ``has_cache``), or for a
        link document the summary of the page it points at; and the id of the document whose
        member that summary was read from (None when it is no document's: a link to a page
        never indexed). (None, None) when ``doc_id`` is not in the bundle."""
        stored = self._stored(doc_id, until_links)
        if stored is None:
            return None, None
        if doc_id[DOC_TYPE] == DocType.LINK:
            return self._page_for_link(stored.summary, until_links)
        stored.summary["has_cache"] = self._has_cache(doc_id)
        return stored, doc_id

    def _stored(self, doc_id: bytes, until_links: bool = False) -> StoredSummary | None:
        """``doc_id``'s stored summary read up to its body (or its links), None when it is not
        in the bundle."""
        found = self.reader.summary_gzip(doc_id)
        if found is None:
            return None
        path, member = found
        try:
            return StoredSummary.of(member, until_links)
        except (ValueError, *INFLATE_ERRORS) as exc:
            raise CorruptIndexError(path, f"summary of {doc_id.hex()}: {exc}") from exc

    def _has_cache(self, doc_id: bytes) -> bool:
        """Whether the bundle keeps a cached copy of ``doc_id`` (its newest doc_map member
        has a cache length): the search page's "cached" link, told with the summary so that
        the page need not look the document up again."""
        for part in reversed(self.reader.partitions):
            row = part.doc_map.find_member(doc_id)
            if row is not None:
                return int(part.doc_map.cache_length[row]) > 0
        return False

    def summary_heads(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Like :meth:`summaries` but only each summary's url and title, read from the head
        of the stored summary (enough for a result list without snippets). Pages whose robot
        metas forbid indexing are never stored (the page processor drops them), so nothing is
        lost by not reading the metas. Heads are kept (at most ``head_cache``, least used out) for the
        shard's lifetime, a snapshot of the index: the same pages head the result lists query
        after query, and each head is otherwise a gzip member to inflate."""
        with self.lock:
            out: list[dict[str, Any] | None] = []
            for doc_id in doc_ids:
                try:
                    cached = self._heads.load(doc_id, self._summary_head)
                except CorruptIndexError as exc:  # one damaged head costs only its result
                    logger.warning("summary head of %s unreadable: %s", doc_id.hex(), exc)
                    cached = (None,)
                out.append(dict(cached[0]) if cached[0] is not None else None)
            return out

    def _summary_head(self, doc_id: bytes) -> tuple[dict[str, Any] | None]:
        """The head summary of one document (see :meth:`summary_heads`), in a 1-tuple so
        that a missing document is cached too."""
        head = self.reader.summary_head_of(doc_id)
        if head is None:
            return (None,)
        summary: dict[str, Any] = {"url": head[0], "title": head[1]}
        if doc_id[DOC_TYPE] == DocType.LINK:
            summary["kind"] = "link"
            block = self.reader.postings(f"info:{head[0]}").next_block()
            if block is None:
                summary["page_indexed"] = False
            else:
                url, title = self.reader.summary_head(block.partition, int(block.doc_index[0]))
                summary = {"url": url, "title": title, "page_indexed": True}
        return (summary,)

    def _page_for_link(self, link: dict[str, Any],
                       until_links: bool = False) -> tuple[StoredSummary, bytes | None]:
        """The stored summary of the page a link document points at (its ``info:`` meta
        word) and that page's id, or the link's own marked ``page_indexed: False`` and
        None."""
        not_indexed = StoredSummary({**link, "page_indexed": False}, False, None, b"")
        cursor = self.reader.postings(f"info:{link.get('url', '')}")
        block = cursor.next_block()
        if block is None:
            return not_indexed, None
        page_id = self.reader.doc_id(block.partition, int(block.doc_index[0]))
        page = self._stored(page_id, until_links)
        if page is None or not page.summary:
            return not_indexed, None
        page.summary.update(page_indexed=True, has_cache=self._has_cache(page_id))
        return page, page_id
