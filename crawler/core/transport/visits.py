"""What a fetcher reports about each url of a schedule it visited, and how the visit went.

Layer: ``crawler.core``. The fetcher (:mod:`crawler.core.fetcher.pages`) makes one
:class:`Visit` per page download; it travels in the batch's ``fetched`` list
(:mod:`crawler.core.transport.batch`) to the queue server that owns the url, which keeps what
recrawls need (:mod:`crawler.core.scheduler.revisits`): the page's cache validators, which copy of
it is in the index, and when that copy was fetched.

Outcomes of a visit (the seed's *Yioop Search Engine Ranking Mechanisms* keeps "HTTP Etag and
Expires header for urls on whether to expect a url to have changed or not since the last time
it was crawled"; a revisit asks with those validators):

* ``new``: first visit, a page document was made;
* ``changed``: a revisit found other text; its new document replaces the old one in search;
* ``unchanged``: a revisit got the page again (200) with the same text hash: nothing is
  re-indexed, only the visit time is kept;
* ``not_modified``: the conditional request was answered 304: the same;
* ``gone``: the page answered 404 or 410: it leaves the results;
* ``noindex``: the page (now) forbids indexing by a robots meta tag or header: it leaves the
  results too;
* ``error``: no usable answer (a fetch error, another 4xx or a 5xx): the indexed copy stays.
* ``unknown``: a row from a fetcher that predates outcomes (``[url, etag, expires]``).

The wire form is a list: ``[url, etag, expires, last_modified, outcome, status, fetched_at,
doc_id hex, depth, policy, policy_depth, simhash hex, title tag]``; the three-item form of
older fetchers and the eleven-item form without the SimHash (then 0: none) still read.
``simhash`` is the indexed page's SimHash and ``title_tag`` its title key's number
(:mod:`indexer.core.signals.simhash`): the queue server compares them with its other pages'
(near-duplicates need not have their links followed). A malformed row raises ``ValueError`` (the queue server drops the batch as malformed).
Nothing here imports the rest of the crawler, so the crawl queue can use the outcomes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class Outcome(enum.StrEnum):
    NEW = "new"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    NOT_MODIFIED = "not_modified"
    GONE = "gone"
    NOINDEX = "noindex"
    ERROR = "error"
    UNKNOWN = "unknown"


# outcomes that leave a new copy of the page in the index
INDEXED = frozenset({Outcome.NEW, Outcome.CHANGED})
# outcomes that keep the copy already in the index as it is
KEPT = frozenset({Outcome.UNCHANGED, Outcome.NOT_MODIFIED, Outcome.ERROR, Outcome.UNKNOWN})
# outcomes that take the page out of the results
REMOVED = frozenset({Outcome.GONE, Outcome.NOINDEX})
GONE_STATUSES = frozenset({404, 410})
_FIELDS = 13
_FIELDS_BEFORE_SIMHASH = 11


@dataclass(frozen=True, slots=True)
class Visit:
    """One download of a scheduled url (see the module docstring). ``doc_id`` is the page
    document made for it (``new`` and ``changed`` only); ``fetched_at`` the fetcher's clock
    when the answer came; ``depth``, ``policy`` and ``policy_depth`` are echoed from the
    schedule entry, so a revisit is queued as the first visit was."""

    url: str
    outcome: Outcome
    status: int = 0
    fetched_at: float = 0.0
    etag: str | None = None
    expires: float | None = None
    last_modified: str | None = None
    doc_id: bytes | None = None
    depth: int = 0
    policy: str = "default"
    policy_depth: int = 0
    simhash: int = 0
    title_tag: int = 0

    def to_wire(self) -> list[Any]:
        return [self.url, self.etag, self.expires, self.last_modified, self.outcome.value,
                self.status, self.fetched_at, None if self.doc_id is None else self.doc_id.hex(),
                self.depth, self.policy, self.policy_depth, f"{self.simhash:016x}", self.title_tag]

    @classmethod
    def from_wire(cls, row: Any) -> Visit:
        if not isinstance(row, list) or len(row) not in (3, _FIELDS_BEFORE_SIMHASH, _FIELDS):
            raise ValueError("fetched row: wrong number of fields")
        try:
            url, etag, expires = str(row[0]), _text(row[1]), _number(row[2])
            if len(row) == 3:
                return cls(url, Outcome.UNKNOWN, etag=etag, expires=expires)
            doc_id = None if row[7] is None else bytes.fromhex(str(row[7]))
            if doc_id is not None and len(doc_id) != 24:
                raise ValueError("a doc_id has 24 bytes")
            simhash = int(str(row[11]), 16) if len(row) == _FIELDS else 0
            tag = int(row[12]) if len(row) == _FIELDS else 0
            if not 0 <= simhash < 1 << 64 or not 0 <= tag < 1 << 32:
                raise ValueError("a simhash has 64 bits, a title tag 32")
            return cls(url, Outcome(str(row[4])), int(row[5]), float(row[6]), etag, expires,
                       _text(row[3]), doc_id, int(row[8]), str(row[9]), int(row[10]), simhash, tag)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"bad fetched row: {exc}") from None


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def outcome_of(status: int, failed: bool, indexable: bool, text_hash: str | None,
               previous_hash: str | None) -> Outcome:
    """The outcome of one download: ``failed`` when there was no usable answer (a fetch
    error, or an HTTP error other than 404 and 410); ``text_hash`` the hex text hash of the
    page's document and ``previous_hash`` that of the copy in the index (None on a first
    visit)."""
    if status in GONE_STATUSES:
        return Outcome.GONE
    if failed:
        return Outcome.ERROR
    if status == 304:
        return Outcome.NOT_MODIFIED if previous_hash else Outcome.ERROR
    if not indexable:
        return Outcome.NOINDEX
    if previous_hash is None:
        return Outcome.NEW
    return Outcome.UNCHANGED if text_hash == previous_hash else Outcome.CHANGED
