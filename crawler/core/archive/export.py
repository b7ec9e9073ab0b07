"""A crawl's stored pages as a WARC 1.1 file, with its CDXJ index beside it.

Layer: ``crawler.core.archive``; ``manage.py export_warc`` and the admin's action (through a
task) call :func:`export_crawl` with the crawl's bundle folders. The pages are read as the
crawl stored them (:mod:`.stored`), bundle by bundle (queue server order), in the order each
was stored, so that an archive crawl of the file keeps the crawl's order (:mod:`.ordering`).

The file (ISO 28500:2017, WARC 1.1; records made with ``warcio``), one gzip member per record:

* a ``warcinfo`` record: the software, the crawl, and what the records hold;
* per page with a cached copy, and per redirect: a ``response`` record (the HTTP status line,
  the response headers the engine keeps with a page: ``Content-Type``, ``Content-Language``,
  ``Last-Modified``, ``ETag``, ``Expires``, ``Server``, ``X-Robots-Tag``, or ``Location`` for a
  redirect; a ``Content-Length`` of the payload; then the payload: the body as the fetcher
  received it, transfer and content codings undone, within the crawl's byte range);
  ``WARC-Date`` is the fetch time (to the microsecond), ``WARC-IP-Address`` the server's address
  when known; digests are computed. Then a ``request`` record (``WARC-Concurrent-To`` the
  response): the request line and ``Host`` only, since the engine does not keep the requests
  it sent; and a ``metadata`` record (``WARC-Refers-To`` the response, ``application/
  warc-fields``) with the engine's summary fields (fetch time as a Unix time, title, language,
  MIME type, robot metas, content hash, description).

Pages stored without a cached copy (NOARCHIVE, "cache whole crawled pages" off) are left out
and counted, as are stored documents that cannot be read. Link documents are not pages.

The file is written under a temporary name and renamed when complete; so is the CDXJ index
(:mod:`.cdxj`, ``<file>.cdxj``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from io import BytesIO
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from isal import igzip
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler.core.archive import skipped
from crawler.core.archive.cdxj import CdxjEntry, cdxj_text
from crawler.core.archive.stored import (
    ArchivedPage,
    RecordSkipped,
    StoredPosition,
    StoredReader,
    iter_stored,
    stored_page,
)
from indexer.core.ids import DocType

GZIP_LEVEL = 2  # ISA-L's levels are 0-3: 2 writes about as small a file as zlib's 6, faster
HEADER_NAMES = {"content-type": "Content-Type", "content-language": "Content-Language",
                "last-modified": "Last-Modified", "etag": "ETag", "expires": "Expires",
                "server": "Server", "x-robots-tag": "X-Robots-Tag", "location": "Location"}
METADATA_FIELDS = (("title", "yioopy-title"), ("lang", "yioopy-lang"),
                   ("mime_type", "yioopy-mime-type"), ("content_hash", "yioopy-content-hash"),
                   ("description", "yioopy-description"))
DESCRIPTION_CHARS = 2000


@dataclass(slots=True)
class ExportReport:
    """What an export wrote: records by kind, what it left out, sizes and time."""

    path: Path
    cdxj: Path
    pages: int = 0
    redirects: int = 0
    left_out: dict[str, int] = field(default_factory=dict)  # reason -> stored documents
    payload_bytes: int = 0     # bytes of page bodies written
    file_bytes: int = 0        # bytes of the WARC file
    seconds: float = 0.0

    @property
    def left_out_total(self) -> int:
        return sum(self.left_out.values())

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "cdxj": str(self.cdxj), "pages": self.pages,
                "redirects": self.redirects, "left_out": dict(self.left_out),
                "payload_bytes": self.payload_bytes, "file_bytes": self.file_bytes,
                "seconds": round(self.seconds, 3)}


def warc_date(when: float) -> str:
    """A WARC 1.1 date: UTC, to the microsecond (the current time when ``when`` is 0)."""
    moment = datetime.fromtimestamp(when or time.time(), UTC).replace(tzinfo=None)
    return moment.isoformat() + "Z"


def _field(value: Any) -> str:
    return " ".join(str(value).split())


class _Writer:
    """Writes records, one gzip member each, and keeps the CDXJ entries of the responses."""

    def __init__(self, out: BinaryIO, name: str) -> None:
        self.out = out
        self.name = name
        self.offset = 0
        self.entries: list[CdxjEntry] = []

    def write(self, record: Any) -> tuple[int, int]:
        """Write one record; (its offset, its length) in the file."""
        buffer = BytesIO()
        WARCWriter(buffer, gzip=False, warc_version="1.1").write_record(record)
        member = igzip.compress(buffer.getbuffer(), GZIP_LEVEL)
        self.out.write(member)
        start, self.offset = self.offset, self.offset + len(member)
        return start, len(member)

    def builder(self) -> WARCWriter:
        return WARCWriter(None, gzip=False, warc_version="1.1")


def _response(builder: WARCWriter, page: ArchivedPage) -> Any:
    phrase = HTTPStatus(page.status).phrase if page.status in HTTPStatus._value2member_map_ \
        else "Status"
    headers = [(HEADER_NAMES.get(k, k.title()), v) for k, v in page.headers.items()]
    headers.append(("Content-Length", str(len(page.body))))
    http = StatusAndHeaders(f"{page.status} {phrase}", headers, protocol="HTTP/1.1")
    warc = {"WARC-Date": warc_date(page.fetched_at)}
    if page.ip:
        warc["WARC-IP-Address"] = page.ip
    return builder.create_warc_record(page.url, "response", payload=BytesIO(page.body),
                                      length=len(page.body), http_headers=http,
                                      warc_headers_dict=warc)


def _request(builder: WARCWriter, page: ArchivedPage, response_id: str, date: str) -> Any:
    parts = urlsplit(page.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    http = StatusAndHeaders(f"GET {target} HTTP/1.1", [("Host", parts.netloc)],
                            is_http_request=True)
    return builder.create_warc_record(page.url, "request", http_headers=http,
                                      warc_headers_dict={"WARC-Date": date,
                                                         "WARC-Concurrent-To": response_id})


def _metadata(builder: WARCWriter, page: ArchivedPage, summary: dict[str, Any],
              response_id: str, date: str) -> Any:
    lines = [f"yioopy-fetched-at: {page.fetched_at!r}"]
    for key, name in METADATA_FIELDS:
        value = summary.get(key)
        if value not in (None, ""):
            lines.append(f"{name}: {_field(value)[:DESCRIPTION_CHARS]}")
    metas = summary.get("robot_metas")
    if metas:
        lines.append(f"yioopy-robot-metas: {_field(' '.join(map(str, metas)))}")
    body = "".join(line + "\r\n" for line in lines).encode("utf-8")
    return builder.create_warc_record(page.url, "metadata", payload=BytesIO(body),
                                      length=len(body), warc_content_type=
                                      "application/warc-fields",
                                      warc_headers_dict={"WARC-Date": date,
                                                         "WARC-Refers-To": response_id})


def _write_page(writer: _Writer, page: ArchivedPage, summary: dict[str, Any]) -> None:
    builder = writer.builder()
    response = _response(builder, page)
    offset, length = writer.write(response)
    headers = response.rec_headers
    response_id = headers.get_header("WARC-Record-ID")
    date = headers.get_header("WARC-Date")
    writer.entries.append(CdxjEntry(
        page.url, "".join(c for c in date if c.isdigit())[:14],
        page.headers.get("content-type", "").split(";")[0].strip() or "unk", page.status,
        headers.get_header("WARC-Payload-Digest") or "", length, offset, writer.name))
    writer.write(_request(builder, page, response_id, date))
    writer.write(_metadata(builder, page, summary, response_id, date))


def export_crawl(bundles: list[Path], out: Path, info: dict[str, Any],
                 progress: Callable[[ExportReport], None] | None = None) -> ExportReport:
    """Write the stored pages of ``bundles`` (a crawl's ``qs<n>/IndexData<ts>`` folders, in
    queue server order) to the WARC file ``out`` and its CDXJ index ``out.cdxj`` (see the
    module); ``info`` goes into the warcinfo record. ``progress`` is called every 1,000
    pages."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = ExportReport(out, out.with_name(out.name + ".cdxj"))
    started = time.perf_counter()
    tmp = out.with_name(out.name + ".tmp")
    try:
        with open(tmp, "wb") as handle:
            writer = _Writer(handle, out.name)
            builder = writer.builder()
            writer.write(builder.create_warcinfo_record(out.name, {
                "software": "Yioopy (WARC export, crawler.core.archive.export)",
                "format": "WARC File Format 1.1",
                "conformsTo": "http://iipc.github.io/warc-specifications/specifications/"
                              "warc-format/warc-1.1/", **info}))
            _export_bundles(bundles, writer, report, progress)
            handle.flush()
            os.fsync(handle.fileno())
        report.file_bytes = tmp.stat().st_size
        _write_text(report.cdxj, cdxj_text(writer.entries))
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    report.seconds = time.perf_counter() - started
    return report


def _export_bundles(bundles: list[Path], writer: _Writer, report: ExportReport,
                    progress: Callable[[ExportReport], None] | None) -> None:
    for bundle in bundles:
        reader = StoredReader(bundle.parent.parent, int(bundle.name[len("IndexData"):]))
        try:
            for record in iter_stored([bundle], StoredPosition()):
                try:
                    summary, cache = reader.summary_and_cache(record.pointer)
                    page = _page(summary, cache, record.pointer.doc_type)
                except RecordSkipped as exc:
                    report.left_out[exc.reason] = report.left_out.get(exc.reason, 0) + 1
                    continue
                _write_page(writer, page, summary)
                if record.pointer.doc_type == DocType.LOCATION:
                    report.redirects += 1
                else:
                    report.pages += 1
                report.payload_bytes += len(page.body)
                if progress is not None and (report.pages + report.redirects) % 1000 == 0:
                    progress(report)
        finally:
            reader.close()


def _page(summary: dict[str, Any], cache: bytes | None, doc_type: int) -> ArchivedPage:
    page = stored_page(summary, cache, doc_type)
    if page.status < 100 or page.status > 999:
        raise RecordSkipped(skipped.UNREADABLE, f"{page.url}: status {page.status}")
    return page


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
