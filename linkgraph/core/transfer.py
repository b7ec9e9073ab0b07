"""One shard's link records on the wire: what a queue server streams to the machine that builds
the crawl's web graph (Nutch's WebGraph job reads every segment, seed 002 "Nutch's new scoring
and indexing framework"; here a queue server's shard may live on another machine).

Layer: ``linkgraph.core`` (pure Python). ``linkgraph.views.shard_links`` encodes with
:func:`encode_shard_links`; :class:`.remote.RemoteShard` decodes with
:func:`decode_shard_links`.

Format ``linkrecords`` version 1: a gzip stream of UTF-8 JSON lines.

* line 1, the header: ``{"format": "linkrecords", "version": 1, "crawl": TS, "server": N}``;
* then one line per record, in any order:

  - ``{"p": url, "t": fetched_at, "l": [[target, anchor], ...]}``: a page record
    (:class:`.builder.PageLinks`);
  - ``{"o": source, "l": [[target, anchor], ...]}``: links of a source known only from link
    documents (:attr:`.bundles.ShardLinks.orphans`);
  - ``{"r": url, "to": location}``: a redirect;
  - ``{"s": url, "h": simhash hex, "c": canonical, "k": title key}``: a page's near-duplicate signature
    (:attr:`.bundles.ShardLinks.signatures`; a reader that predates them fails on them, so a
    name server is updated before its queue servers);

* last line, the trailer: ``{"end": true, "pages": P, "orphans": O, "redirects": R,
  "documents": D}``. A stream without it, or whose counts differ, was cut short and is refused
  (:class:`TransferError`), so a dropped connection never yields a partial graph.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from typing import IO, Any

from indexer.core.errors import LinkGraphError
from indexer.core.signals.simhash import from_hex, to_hex

from .builder import PageLinks
from .bundles import ShardLinks

FORMAT = "linkrecords"
FORMAT_VERSION = 1
CONTENT_TYPE = "application/x-linkrecords+gzip"
_FLUSH_BYTES = 1 << 16


class TransferError(LinkGraphError):
    """A link-records stream that is not one, is too new, or was cut short."""


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def encode_shard_links(shard: ShardLinks, crawl: int, server: int) -> Iterator[bytes]:
    """The gzip-compressed chunks of ``shard`` in the ``linkrecords`` format (a generator:
    the whole stream is never held in memory at once)."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: a gzip container
    pending = bytearray()
    for obj in _records(shard, crawl, server):
        pending += _line(obj)
        if len(pending) >= _FLUSH_BYTES:
            chunk = compressor.compress(bytes(pending))
            pending.clear()
            if chunk:
                yield chunk
    yield compressor.compress(bytes(pending)) + compressor.flush()


def _records(shard: ShardLinks, crawl: int, server: int) -> Iterator[dict[str, Any]]:
    yield {"format": FORMAT, "version": FORMAT_VERSION, "crawl": int(crawl),
           "server": int(server)}
    for record in shard.pages.values():
        yield {"p": record.url, "t": record.fetched_at, "l": [list(p) for p in record.links]}
    for source, links in shard.orphans.items():
        yield {"o": source, "l": [list(p) for p in links]}
    for url, location in shard.redirects.items():
        yield {"r": url, "to": location}
    for url, (fingerprint, canonical, key) in shard.signatures.items():
        yield {"s": url, "h": to_hex(fingerprint), "c": canonical, "k": key}
    yield {"end": True, "pages": len(shard.pages), "orphans": len(shard.orphans),
           "redirects": len(shard.redirects), "documents": shard.documents}


def _pairs(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, list):
        raise TransferError("a record's links are not a list")
    out = []
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2
                and isinstance(pair[0], str) and isinstance(pair[1], str)):
            raise TransferError("a link is not a [target, anchor] pair of strings")
        out.append((pair[0], pair[1]))
    return out


def decode_shard_links(stream: IO[bytes], crawl: int | None = None) -> ShardLinks:
    """Read a ``linkrecords`` stream (gzip bytes) into a :class:`.bundles.ShardLinks`.

    Raises :class:`TransferError` for anything but a complete stream of the expected crawl.
    """
    out = ShardLinks()
    header = None
    trailer = None
    try:
        with gzip.GzipFile(fileobj=stream, mode="rb") as raw:
            for number, line in enumerate(io.BufferedReader(raw)):
                if trailer is not None:
                    raise TransferError("records after the end of the stream")
                try:
                    obj = json.loads(line)
                except ValueError as exc:
                    raise TransferError(f"line {number + 1} is not JSON") from exc
                if not isinstance(obj, dict):
                    raise TransferError(f"line {number + 1} is not an object")
                if header is None:
                    header = obj
                    _check_header(obj, crawl)
                elif "p" in obj:
                    out.add_page(PageLinks(str(obj["p"]), float(obj.get("t") or 0.0),
                                           tuple(_pairs(obj.get("l", [])))))
                elif "o" in obj:
                    out.orphans.setdefault(str(obj["o"]), []).extend(_pairs(obj.get("l", [])))
                elif "r" in obj:
                    out.redirects[str(obj["r"])] = str(obj["to"])
                elif "s" in obj:
                    out.signatures[str(obj["s"])] = (from_hex(obj.get("h")),
                                                     str(obj.get("c") or ""),
                                                     str(obj.get("k") or ""))
                elif obj.get("end") is True:
                    trailer = obj
                else:
                    raise TransferError(f"line {number + 1} is not a link record")
    except (OSError, EOFError, zlib.error) as exc:  # gzip's errors for a torn stream
        raise TransferError(f"the stream is not complete gzip data: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise TransferError(f"a malformed record: {exc}") from exc
    if header is None:
        raise TransferError("an empty stream")
    if trailer is None:
        raise TransferError("the stream was cut short (no end line)")
    counts = (len(out.pages), len(out.orphans), len(out.redirects))
    if counts != (trailer.get("pages"), trailer.get("orphans"), trailer.get("redirects")):
        raise TransferError(f"the stream's counts {counts} differ from its end line")
    out.documents = int(trailer.get("documents") or 0)
    return out


def _check_header(obj: dict[str, Any], crawl: int | None) -> None:
    if obj.get("format") != FORMAT:
        raise TransferError("not a link-records stream")
    if int(obj.get("version", 0)) > FORMAT_VERSION:
        raise TransferError(f"link-records version {obj['version']} is newer than "
                            f"{FORMAT_VERSION}")
    if crawl is not None and obj.get("crawl") != int(crawl):
        raise TransferError(f"the stream is of crawl {obj.get('crawl')}, not {crawl}")
