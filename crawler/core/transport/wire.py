"""JSON forms of what crosses processes: index documents, discovered and deferred urls, schedules.

Layer: ``crawler.core``. Envelopes (``shipping.seal``) carry these; nothing here trusts its
input: ``*_from_wire`` functions validate types and raise :class:`WireError` on anything odd.

The batch a fetcher ships to a queue server, which carries these, is
:class:`crawler.core.transport.batch.FetcherBatch`.

A document travels *encoded* (:func:`encoded_document_to_wire`): the fetcher has already built
the bytes the index stores (gzipped summary and cached page, compressed document index), so the
queue server's indexer only checks and appends them. ``{"url", "id", "s", "c", "x"}`` are the
url, and the base64 of the doc id, summary, cached page and index blob (a link document's
source page is in its index blob, as its ``source:`` meta word). The older dict form
(:func:`document_to_wire`, terms as JSON) is still read.
"""

from __future__ import annotations

import base64
from typing import Any

from crawler.core.scheduler import DiscoveredUrl, Schedule, ScheduleEntry
from indexer.core.documents.document import IndexDocument
from indexer.core.documents.encoding import EncodedDocument, encode_document
from indexer.core.ids import DocType


class WireError(ValueError):
    """A message field of the wrong type or shape."""


def document_to_wire(doc: IndexDocument) -> dict[str, Any]:
    return {
        "url": doc.url, "host": doc.host, "type": int(doc.doc_type),
        "text_hash": doc.text_hash.hex(), "summary": dict(doc.summary),
        "terms": {term: list(map(int, positions)) for term, positions in doc.terms.items()},
        "length": doc.length, "meta": list(doc.meta_words),
        "regions": [[int(p), float(w)] for p, w in doc.region_weights],
        "classes": list(doc.classifier_scores),
        "cache": base64.b64encode(doc.cached_page).decode("ascii")
        if doc.cached_page is not None else None,
    }


def _need(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    if not isinstance(value, kind):
        raise WireError(f"{name}: expected {kind}, got {type(value).__name__}")
    return value


def document_from_wire(data: Any) -> IndexDocument:
    _need(data, dict, "document")
    try:
        terms = {str(t): tuple(int(p) for p in _need(ps, list, "positions"))
                 for t, ps in _need(data["terms"], dict, "terms").items()}
        text_hash = bytes.fromhex(_need(data["text_hash"], str, "text_hash"))
        cache = data.get("cache")
        return IndexDocument(
            url=_need(data["url"], str, "url"), host=_need(data["host"], str, "host"),
            doc_type=DocType(int(data["type"])), text_hash=text_hash,
            summary=_need(data["summary"], dict, "summary"),
            terms=terms, length=int(data["length"]),
            meta_words=tuple(str(m) for m in _need(data.get("meta", []), list, "meta")),
            region_weights=tuple((int(p), float(w)) for p, w in data.get("regions", [])),
            classifier_scores=tuple(float(x) for x in data.get("classes", [])),
            cached_page=base64.b64decode(cache) if cache is not None else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"bad document: {exc}") from None


def encoded_document_to_wire(doc: IndexDocument) -> dict[str, Any]:
    """``doc`` encoded as the index stores it (the fetcher does the indexer's encoding)."""
    item = encode_document(doc)
    b64 = base64.b64encode
    data = {"url": item.url, "id": b64(item.doc_id).decode("ascii"),
            "s": b64(item.summary).decode("ascii"), "c": b64(item.cache).decode("ascii"),
            "x": b64(item.index_blob).decode("ascii")}
    return data


def is_encoded_document(data: Any) -> bool:
    return isinstance(data, dict) and "x" in data


def encoded_document_from_wire(data: Any) -> EncodedDocument:
    """An encoded document (its bytes are checked when the index appends it)."""
    _need(data, dict, "document")
    try:
        fields = [base64.b64decode(_need(data[key], str, key), validate=True)
                  for key in ("id", "s", "c", "x")]
        return EncodedDocument(*fields, url=_need(data["url"], str, "url"))
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"bad encoded document: {exc}") from None


def deferred_to_wire(entry: ScheduleEntry) -> list[Any]:
    return [entry.url, entry.depth, entry.weight, entry.tier, entry.policy, entry.policy_depth]


def deferred_from_wire(row: Any) -> tuple[str, int, float, int, str, int]:
    _need(row, list, "deferred url")
    if len(row) != 6:
        raise WireError("deferred url: wrong number of fields")
    try:
        return (_need(row[0], str, "url"), int(row[1]), float(row[2]), int(row[3]),
                str(row[4]), int(row[5]))
    except (TypeError, ValueError) as exc:
        raise WireError(f"bad deferred url: {exc}") from None


_DISCOVERED_FIELDS = ("url", "depth", "link_index", "source_url", "source_weight",
                      "source_tier", "is_sitemap", "is_html", "opic_cash", "policy",
                      "policy_depth", "anchor_text")
_DISCOVERED_OLD = 9  # a row without crawl policy and anchor text (older fetchers)


def discovered_to_wire(item: DiscoveredUrl) -> list[Any]:
    return [item.url, item.depth, item.link_index, item.source_url, item.source_weight,
            item.source_tier, item.is_sitemap, item.is_html, item.opic_cash, item.policy,
            item.policy_depth, item.anchor_text]


def discovered_from_wire(row: Any) -> DiscoveredUrl:
    _need(row, list, "discovered url")
    if len(row) not in (_DISCOVERED_OLD, len(_DISCOVERED_FIELDS)):
        raise WireError("discovered url: wrong number of fields")
    try:
        extra = ({"policy": str(row[9]), "policy_depth": int(row[10]),
                  "anchor_text": str(row[11])} if len(row) > _DISCOVERED_OLD else {})
        return DiscoveredUrl(str(row[0]), int(row[1]), int(row[2]), source_url=str(row[3]),
                             source_weight=float(row[4]), source_tier=int(row[5]),
                             is_sitemap=bool(row[6]), is_html=bool(row[7]),
                             opic_cash=float(row[8]), **extra)
    except (TypeError, ValueError) as exc:
        raise WireError(f"bad discovered url: {exc}") from None


def schedule_to_wire(schedule: Schedule, crawl: int, crawl_id: int, server: int
                     ) -> dict[str, Any]:
    return {
        "crawl": crawl, "crawl_id": crawl_id, "server": server, "id": schedule.id,
        "round_size": schedule.round_size, "reissue": schedule.reissue,
        "issued_at": schedule.issued_at, "deadline": schedule.deadline,
        "entries": [[e.url, e.depth, e.weight, e.tier, e.crawl_delay, e.etag, e.slot,
                     e.policy, e.policy_depth, e.last_modified, e.text_hash]
                    for e in schedule.entries],
    }


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


def schedule_from_wire(data: Any) -> tuple[dict[str, Any], Schedule]:
    """(header fields, Schedule) of a schedule message."""
    _need(data, dict, "schedule")
    try:
        entries = tuple(
            ScheduleEntry(str(u), int(d), float(w), int(t), float(c),
                          None if e is None else str(e), int(s),
                          *((str(rest[0]), int(rest[1])) if rest else ()),
                          *(_optional_text(v) for v in rest[2:4]))
            for u, d, w, t, c, e, s, *rest in _need(data["entries"], list, "entries"))
        # issued_at and deadline (the queue server's clock) are missing from older messages
        schedule = Schedule(id=str(data["id"]), entries=entries,
                            issued_at=float(data.get("issued_at", 0.0)),
                            deadline=float(data.get("deadline", 0.0)),
                            round_size=int(data["round_size"]), reissue=int(data["reissue"]))
        header = {"crawl": int(data["crawl"]), "crawl_id": int(data["crawl_id"]),
                  "server": int(data["server"])}
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"bad schedule: {exc}") from None
    return header, schedule

