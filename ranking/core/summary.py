"""Reading a stored page summary without its whole text.

Layer: ``ranking.core`` (pure Python). A page's summary is stored as one gzip member of compact
JSON (``indexer.core.bundle``). With whole-page indexing it carries, besides the 2,000-character
description, the page's whole indexed text under ``"body"``, written as the summary's **last
key** (``crawler.core.indexing.page_summary``): ``{"url":…,…,"body":"…"}``. The search shows
ten results; only a result whose description holds no query word needs the body, and then only
up to the first windows around a query word. So:

* :meth:`StoredSummary.of` inflates the member only until the top-level ``,"body":`` key and
  parses the JSON before it (the description, links, metas): a summary read costs what it cost
  before whole-page indexing. The top-level key is told from a ``"body"`` key nested in the
  summary (a scraper's field) by parsing: the text before it, closed with ``}``, is a JSON
  object only at the top level. A summary without a body (the "summary only" profile, older
  indexes) is inflated and parsed whole, as before.
* :meth:`StoredSummary.body_chunks` then goes on inflating lazily and yields the body's text
  chunk by chunk (JSON escapes decoded, never split in the middle of one or of a UTF-8
  character); the caller stops iterating when it has its windows, and the rest of the member is
  never inflated.

Bad data raises :class:`ValueError`; :func:`parse_summary` is the whole-member fallback.
"""

from __future__ import annotations

import codecs
import json
import zlib
from collections.abc import Iterator
from typing import Any

BODY_KEY = b',"body":"'
STEP = 8192  # bytes inflated at a time (doubling)


def parse_summary(member: bytes) -> dict[str, Any]:
    """The whole summary of a gzip member."""
    data = json.loads(zlib.decompress(member, wbits=31))
    if not isinstance(data, dict):
        raise ValueError("a stored summary is not a JSON object")
    return data


class StoredSummary:
    """A summary read up to its body. ``summary`` is the dict without the body;
    ``has_body`` whether the member goes on with one."""

    __slots__ = ("summary", "has_body", "_inflater", "_pending")

    def __init__(self, summary: dict[str, Any], has_body: bool, inflater: Any,
                 pending: bytes) -> None:
        self.summary = summary
        self.has_body = has_body
        self._inflater = inflater
        self._pending = pending  # inflated bytes of the body not yet given

    @staticmethod
    def of(member: bytes) -> StoredSummary:
        inflater = zlib.decompressobj(31)
        out = b""
        rest = member
        step = STEP
        looked = 0  # where the search for the body key resumes
        final = False
        while not final:
            if rest:
                out += inflater.decompress(rest, step)
                rest = inflater.unconsumed_tail
                step *= 2
            else:
                out += inflater.flush()
                final = True
            at = out.find(BODY_KEY, looked)
            while at != -1:
                try:
                    head = json.loads(out[:at] + b"}")
                except ValueError:
                    head = None  # a nested "body" key (the object is not closed there)
                if isinstance(head, dict):
                    return StoredSummary(head, True, inflater, out[at + len(BODY_KEY):])
                at = out.find(BODY_KEY, at + 1)
            looked = max(0, len(out) - len(BODY_KEY))
        data = json.loads(out)
        if not isinstance(data, dict):
            raise ValueError("a stored summary is not a JSON object")
        return StoredSummary(data, False, None, b"")

    def body_chunks(self, size: int = STEP) -> Iterator[str]:
        """The body's text, in chunks of about ``size`` bytes, inflated as iterated."""
        if not self.has_body:
            return
        utf8 = codecs.getincrementaldecoder("utf-8")()
        raw = self._pending
        self._pending = b""
        tail = b""  # inflated input not yet decodable
        done = False
        while True:
            while not done and len(raw) < size:
                more = self._inflater.unconsumed_tail
                if more:
                    raw += self._inflater.decompress(more, size)
                else:
                    raw += self._inflater.flush()
                    done = True
            buf = tail + raw
            raw = b""
            if done:
                if not buf.endswith(b'"}'):
                    raise ValueError("the body of a stored summary is not its last key")
                buf, tail = buf[:-2], b""
            else:
                keep = _safe_cut(buf)
                buf, tail = buf[:keep], buf[keep:]
            if buf:
                text = utf8.decode(buf, final=done)
                yield json.loads('"' + text + '"') if "\\" in text else text
            if done:
                return


def _safe_cut(buf: bytes) -> int:
    """The length of the longest prefix of raw JSON string bytes that ends neither inside an
    escape sequence nor before the string's closing quote could be told (two bytes kept)."""
    end = max(0, len(buf) - 2)  # the closing '"}' may be what is at the end
    back = buf.rfind(b"\\", max(0, end - 6), end)
    if back == -1:
        return end
    run = back
    while run > 0 and buf[run - 1] == 0x5C:
        run -= 1
    if (back - run + 1) % 2 == 0:
        return end  # an even run of backslashes: complete "\\" escapes
    need = 6 if buf[back + 1:back + 2] == b"u" else 2
    return back if back + need > end else end
