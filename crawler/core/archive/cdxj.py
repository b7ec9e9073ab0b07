"""CDXJ: the index a WARC file is searched by (replay tools such as pywb read it).

Layer: ``crawler.core.archive``, written by :mod:`.export` beside each WARC file. One line per
response record, sorted (so that a binary search finds a url's captures)::

    <SURT url key> <14-digit UTC timestamp> {"url": ..., "mime": ..., "status": "200",
        "digest": "sha1:...", "length": "<bytes of the record in the file>",
        "offset": "<where the record starts in the file>", "filename": "<the WARC file>"}

The url key is the url's SURT form as replay tools write it: scheme and a leading ``www.``
dropped, host labels reversed and joined by commas (an IP address is kept as it is), ``)``,
then the path and the query with its arguments sorted, all in lower case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from indexer.core.urls import host_of


def surt(url: str) -> str:
    """The SURT url key of ``url`` (see the module)."""
    parts = urlsplit(url.strip())
    host = host_of(url.strip())
    if host.startswith("www."):
        host = host[4:]
    labels = host.split(".") if host else []
    is_address = len(labels) == 4 and all(label.isdigit() for label in labels)
    key = host if is_address or ":" in host else ",".join(reversed(labels))
    if parts.port and parts.port not in (80, 443):
        key += f":{parts.port}"
    path = parts.path or "/"
    if parts.query:
        path += "?" + "&".join(sorted(parts.query.split("&")))
    return f"{key}){path}".lower()


@dataclass(frozen=True, slots=True)
class CdxjEntry:
    url: str
    timestamp: str      # 14 digits, UTC
    mime: str
    status: int
    digest: str
    length: int
    offset: int
    filename: str

    def line(self) -> str:
        fields = {"url": self.url, "mime": self.mime, "status": str(self.status),
                  "digest": self.digest, "length": str(self.length),
                  "offset": str(self.offset), "filename": self.filename}
        return f"{surt(self.url)} {self.timestamp} {json.dumps(fields, ensure_ascii=False)}"


def cdxj_text(entries: list[CdxjEntry]) -> str:
    """The CDXJ file of ``entries``: their lines, sorted."""
    lines = sorted(entry.line() for entry in entries)
    return "".join(line + "\n" for line in lines)


def parse_line(line: str) -> tuple[str, str, dict[str, str]]:
    """(url key, timestamp, fields) of one CDXJ line."""
    key, timestamp, data = line.rstrip("\n").split(" ", 2)
    return key, timestamp, json.loads(data)
