"""The documents the agent API reads: stable ids, crawl dates and the text passages cite.

Layer: glue of the ``ranking`` app (Django settings through the search service). The tools
(:mod:`ranking.agent.tools`) find a page here by its id or url and get one
:class:`AgentDocument`: the page's stored summary, the crawl it is in, and its text, the
Markdown of its cached copy (:func:`ranking.core.display.markdown.page_markdown`); where the
site publishes a Markdown twin of the page (``<url>.md``, as llms.txt sites do) and the index
holds it, the twin's text instead, the better text of the same page; for a page kept without
a cached copy, the whole indexed text its summary stores (``source`` says which: ``cached``,
``md_twin`` or ``summary``). Every offset the API gives (``read``'s paging, passages) is into
that text.

Document ids: ``<crawl timestamp>-<doc_id in hex>``. The 24-byte doc_id holds the hashes of
the url, the document type, the page's text and its host (:mod:`indexer.core.ids`), so an id
names one copy of one page in one crawl: it resolves to the same text for as long as that
crawl's index is kept, and a recrawl that changed the page gives the new copy a new id.

Who may read what: the crawls a search without ``its`` reads and those open to anyone
(:meth:`ranking.search_service.SearchService.shards` without ``staff``); an id of another
crawl is answered as one that does not exist. A page whose robots metas forbid archiving
(NOARCHIVE, NONE) is not read; one under NOSNIPPET gives no passages.

Texts are kept per process (:class:`TextCache`, at most ``KEPT_CHARS`` characters of them,
least recently used dropped): an agent reads the pages of its search results in turn, and
searches of the same subject return the same pages; converting a page (a few milliseconds
for a documentation page) is most of what passages cost.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from indexer.core.ids import DOC_ID_LEN, DOC_TYPE, DocType
from ranking.cached import decode, is_html, is_web_url
from ranking.core.display.markdown import Heading, headings, page_markdown, plain_markdown
from ranking.core.display.passages import units
from ranking.core.display.snippets import FOLD_CHARS
from ranking.core.errors import NoIndexError
from ranking.core.search.mixes import unwrap
from ranking.core.shard.candidates import ShardClient
from ranking.core.shard.local import LocalShard
from ranking.page import NO_ARCHIVE, stored_page
from ranking.search_service import SearchService

from .errors import DocumentNotFound, ToolArgumentError

KEPT_CHARS = 32_000_000
MAX_URL = 2048
_ID = re.compile(rf"([0-9]{{1,12}})-([0-9a-f]{{{2 * DOC_ID_LEN}}})")


def document_id(its: int | None, doc_id: bytes) -> str:
    return f"{its or 0}-{doc_id.hex()}"


def parse_id(text: str) -> tuple[int, bytes] | None:
    """(crawl timestamp, doc_id) of a document id, None when it is not one."""
    m = _ID.fullmatch(text.strip().lower())
    return None if m is None else (int(m.group(1)), bytes.fromhex(m.group(2)))


def iso_date(seconds: Any) -> str | None:
    """A stored ``fetched_at`` (seconds since the epoch) as an ISO 8601 UTC time."""
    try:
        value = float(seconds or 0)
    except (TypeError, ValueError):
        return None
    if not 0 < value < 1e11:
        return None
    return datetime.fromtimestamp(value, UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")


@dataclass(frozen=True, slots=True)
class PageText:
    """The text of one stored copy: its Markdown (or stored body), its headings, whether it
    came from the ``cached`` copy or the ``summary``, and its passage units."""

    text: str
    headings: tuple[Heading, ...]
    source: str
    spans: tuple[tuple[int, int], ...]  # the text's passage units (query-independent)
    lowered: str | None = None  # text.lower() where it has the text's length, for scans


def page_text(text: str, source: str) -> PageText:
    """A text with what passages need of it made once (:mod:`ranking.core.display.passages`):
    headings, units, and the lower-cased copy when it keeps every offset (characters such
    as the Kelvin sign fold to ASCII letters only in a case-insensitive pattern: such a
    text is scanned by the pattern instead)."""
    lowered = text.lower()
    if len(lowered) != len(text) or any(c in text for c in FOLD_CHARS):
        lowered = None
    return PageText(text, tuple(headings(text)), source, tuple(units(text)), lowered)


@dataclass(frozen=True, slots=True)
class AgentDocument:
    """One readable page: ``id`` (see the module docstring), its url, title and crawl date,
    its stored ``summary``, the shard and doc_id it is stored under."""

    id: str
    its: int | None
    doc_id: bytes
    url: str
    title: str
    crawl_date: str | None
    mime_type: str
    summary: dict[str, Any]
    shard: LocalShard

    @property
    def snippetable(self) -> bool:
        return "NOSNIPPET" not in {str(m).upper() for m in self.summary.get("robot_metas", ())}

    def cite(self) -> dict[str, Any]:
        """What cites the page in every answer."""
        return {"id": self.id, "url": self.url, "title": self.title,
                "crawl_date": self.crawl_date}

    def cached_bytes(self) -> bytes | None:
        with self.shard.lock:
            return self.shard.reader.cached_page(self.doc_id)


class TextCache:
    """Page texts by (bundle path, doc_id), least recently used dropped past ``size``
    characters in all."""

    def __init__(self, size: int = KEPT_CHARS) -> None:
        self._size = size
        self._chars = 0
        self._kept: OrderedDict[tuple[str, bytes], PageText] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._chars = 0

    def text(self, doc: AgentDocument) -> PageText:
        key = (str(doc.shard.reader.path), doc.doc_id)
        with self._lock:
            hit = self._kept.get(key)
            if hit is not None:
                self._kept.move_to_end(key)
                return hit
        made = _page_text(doc)
        with self._lock:
            if key not in self._kept:
                self._kept[key] = made
                self._chars += len(made.text)
            while self._chars > self._size and len(self._kept) > 1:
                self._chars -= len(self._kept.popitem(last=False)[1].text)
        return made


def twin_url(url: str) -> str:
    """The url of a page's Markdown twin, as llms.txt sites publish them: the page's url and
    ``.md`` (``index.html.md`` for a url that ends in ``/``)."""
    return url + ("index.html.md" if url.endswith("/") else ".md")


def _twin_text(doc: AgentDocument) -> str | None:
    """The Markdown of the page's twin when the index holds it with a cached copy (and its
    robot metas allow one), else None."""
    if doc.url.endswith(".md") or not is_html(doc.mime_type, b""):
        return None
    twin = stored_page(doc.shard, twin_url(doc.url))
    if twin is None or not twin.archivable or not twin.has_cache:
        return None
    with doc.shard.lock:
        data = doc.shard.reader.cached_page(twin.doc_id)
    text = plain_markdown(decode(data)) if data else ""
    return text if text.strip() else None


def _page_text(doc: AgentDocument) -> PageText:
    twin = _twin_text(doc)
    if twin is not None:
        return page_text(twin, "md_twin")
    data = doc.cached_bytes()
    if data:
        text = page_markdown(decode(data), is_html(doc.mime_type, data))
        source = "cached"
    else:
        text = str(doc.summary.get("body") or doc.summary.get("description") or "")
        source = "summary"
    return page_text(text, source)


class DocumentStore:
    """Finds readable pages for the agent tools through the process's search service."""

    def __init__(self, service: SearchService) -> None:
        self.service = service
        self.texts = TextCache()

    def find(self, ref: str) -> AgentDocument:
        """The page a document id or an ``http(s)`` url names (for a url: its newest copy in
        the index searched). Raises DocumentNotFound, ToolArgumentError for a reference
        that is neither."""
        ref = (ref or "").strip()
        parsed = parse_id(ref)
        if parsed is not None:
            return self._by_id(*parsed)
        if len(ref) > MAX_URL or not is_web_url(ref):
            raise ToolArgumentError("give a document id (as search answers) or an http(s) url")
        try:
            its, page, shards = self.service.stored_page(ref, None)
        except NoIndexError as exc:
            raise DocumentNotFound(str(exc)) from exc
        if page is None:
            raise DocumentNotFound(f"{ref} is not in the index")
        shard = next((s for s in map(unwrap, shards)
                      if isinstance(s, LocalShard) and s.name == page.shard), None)
        if shard is None:
            raise DocumentNotFound(f"{ref} is not in this machine's index")
        return self._document(its, page.doc_id, page.summary, shard)

    def _by_id(self, its: int, doc_id: bytes) -> AgentDocument:
        try:
            _, shards = self.service.shards(its)
        except NoIndexError as exc:
            raise DocumentNotFound(f"no document {document_id(its, doc_id)}: {exc}") from exc
        for shard in local_shards(shards):
            with shard.lock:
                summary = shard.reader.summary(doc_id)
            if summary is not None and doc_id[DOC_TYPE] != DocType.LINK:
                return self._document(its, doc_id, dict(summary), shard)
        raise DocumentNotFound(f"no document {document_id(its, doc_id)} in the index")

    def result_document(self, shard: ShardClient | None, its: int | None, url: str,
                        doc_hex: str) -> AgentDocument | None:
        """The page of a search result (its page document when the result's representative
        is a link record), None when it is not readable here."""
        inner = unwrap(shard) if shard is not None else None
        if not isinstance(inner, LocalShard):
            return None
        try:
            doc_id = bytes.fromhex(doc_hex)
        except ValueError:
            return None
        summary = None
        if len(doc_id) == DOC_ID_LEN and doc_id[DOC_TYPE] != DocType.LINK:
            with inner.lock:
                summary = inner.reader.summary(doc_id)
        if summary is None:
            page = stored_page(inner, url)
            if page is None:
                return None
            doc_id, summary = page.doc_id, page.summary
        try:
            return self._document(its, doc_id, dict(summary), inner)
        except DocumentNotFound:
            return None

    @staticmethod
    def _document(its: int | None, doc_id: bytes, summary: dict[str, Any],
                  shard: LocalShard) -> AgentDocument:
        if {str(m).upper() for m in summary.get("robot_metas", ())} & NO_ARCHIVE:
            raise DocumentNotFound("the page asks search engines not to keep a copy "
                                   "(robots NOARCHIVE)")
        url = str(summary.get("url") or "")
        return AgentDocument(document_id(its, doc_id), its, doc_id, url,
                             str(summary.get("title") or url), iso_date(summary.get("fetched_at")),
                             str(summary.get("mime_type") or ""), summary, shard)


def local_shards(shards: list[ShardClient]) -> list[LocalShard]:
    return [s for s in map(unwrap, shards) if isinstance(s, LocalShard)]
