"""Archive records skipped, by reason: bad records are counted and skipped, never fatal.

Layer: ``crawler.core.archive``. Records are found bad in two places: a queue server walking a
WARC file (:mod:`.warc_scan`: a truncated gzip member, a Content-Length that does not match, a
record that is not an HTTP response, a revisit whose original is not in the archive, a record
inflating to more than the source's cap) and a
fetcher reading one (:mod:`.records`: a record that cannot be read or parsed, a stored page
without a cached copy). Both tally them in a :class:`SkippedRecords` (the JSON form of
:class:`crawler.core.transport.fetch_error_kinds.FetchErrorKinds`: ``{reason: {"count", "url",
"message"}}``, an example of each); a fetcher's travel in its batch (``FetcherBatch.skipped``),
a queue server adds both up, reports them in its heartbeat (``archive_skipped``), and the
crawl's row holds the sum over queue servers, shown on its status page (:func:`rows`).
"""

from __future__ import annotations

from typing import Any

from crawler.core.transport import fetch_error_kinds
from crawler.core.transport.fetch_error_kinds import FetchErrorKinds

TRUNCATED_GZIP = "truncated_gzip"
BAD_LENGTH = "bad_length"
MALFORMED = "malformed"
NOT_HTTP = "not_http"
REVISIT_WITHOUT_ORIGINAL = "revisit_without_original"
NO_CACHED_COPY = "no_cached_copy"
UNREADABLE = "unreadable"
TOO_LARGE = "too_large"
NO_WARC_FILES = "no_warc_files"

LABELS = {
    TRUNCATED_GZIP: "Truncated or damaged gzip member",
    BAD_LENGTH: "Content-Length does not match the record",
    MALFORMED: "Not a WARC record (unreadable header)",
    NOT_HTTP: "Not an HTTP response",
    REVISIT_WITHOUT_ORIGINAL: "Revisit record without its original",
    NO_CACHED_COPY: "Stored without a cached copy (NOARCHIVE, cache off)",
    UNREADABLE: "Record could not be read",
    TOO_LARGE: "Record larger than ARCHIVE_MAX_RECORD_BYTES once inflated",
    NO_WARC_FILES: "No .warc or .warc.gz file at the archive path (or outside ARCHIVE_ROOTS)",
}


class SkippedRecords(FetchErrorKinds):
    """Skipped records by reason, with the first example of each (see the module)."""

    __slots__ = ()

    @classmethod
    def from_json(cls, data: Any) -> SkippedRecords:
        out = cls()
        out.add(FetchErrorKinds.from_json(data))
        return out


def merge(reports: Any) -> dict[str, dict[str, Any]]:
    """The sum of several reports (their JSON forms), as JSON."""
    total = SkippedRecords()
    for report in reports:
        total.add(report)
    return total.to_json()


def rows(report: Any) -> list[dict[str, Any]]:
    """The reasons of a report, most frequent first: kind, label, count, url, message."""
    return fetch_error_kinds.rows(report, lambda kind: LABELS.get(kind, kind.replace("_", " ")))


def end_reason(documents_indexed: int, report: Any) -> str:
    """Why an archive crawl that ended with nothing indexed did, when skipped records explain
    it; an empty string otherwise."""
    return fetch_error_kinds.nothing_indexed_reason(
        documents_indexed, rows(report), lambda total: f"{total} archive records were skipped")
