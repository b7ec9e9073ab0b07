"""Reading a response body within the byte range, decoding gzip/deflate as it arrives.

Layer: ``crawler.core.http``; used by ``client.py``. The limit applies to the *decoded* bytes:
``zlib``'s ``max_length`` stops inflating at the room left, so a gzip bomb costs at most
``byte_range`` bytes of memory and the CPU to inflate them, however large it claims to be. Raw
(compressed) input is capped too (``raw_limit``), so a stream that inflates to nothing cannot
be read forever.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

CHUNK = 64 * 1024


class BodyDecodeError(Exception):
    """The content coding is corrupt (a ``BadResponse`` to the fetcher)."""


@dataclass(slots=True)
class BodyRead:
    """The outcome of :func:`read_body`: the kept bytes, and whether more was left unread."""

    body: bytes
    truncated: bool
    complete: bool  # the raw stream reached its end (the connection can be reused)


class _Inflater:
    """gzip (any number of members) or deflate (zlib-wrapped or raw) with an output limit."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._obj = self._new(first=True)
        self._started = False

    def _new(self, first: bool) -> zlib._Decompress:  # type: ignore[name-defined]
        if self.coding == "deflate":
            return zlib.decompressobj(zlib.MAX_WBITS if first else -zlib.MAX_WBITS)
        return zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, auto-detected

    def feed(self, data: bytes, room: int) -> tuple[bytes, bool]:
        """Inflate ``data`` up to ``room`` bytes; return (output, input left unconsumed)."""
        out = bytearray()
        while data and room - len(out) > 0:
            try:
                chunk = self._obj.decompress(data, room - len(out))
            except zlib.error as exc:
                if self.coding == "deflate" and not self._started:
                    # Some servers send raw deflate without the zlib wrapper.
                    self._obj = self._new(first=False)
                    self._started = True
                    continue
                raise BodyDecodeError(f"corrupt {self.coding} body: {exc}") from exc
            self._started = True
            out += chunk
            if self._obj.unconsumed_tail:
                return bytes(out), True
            if self._obj.eof:
                data = self._obj.unused_data
                if data.lstrip(b"\0"):  # another gzip member follows
                    self._obj = self._new(first=True)
                    continue
                return bytes(out), False
            data = b""
        return bytes(out), bool(data)


def read_body(read: Callable[[int], bytes], *, coding: str, limit: int,
              raw_limit: int) -> BodyRead:
    """Read with ``read(n)`` (returns b"" at the end) until ``limit`` decoded bytes.

    ``coding`` is the response's Content-Encoding (lower case; "" or "identity" for none;
    only ``gzip``, ``x-gzip`` and ``deflate`` are decoded, anything else is kept as it came).
    """
    inflater = _Inflater("deflate" if coding == "deflate" else "gzip") \
        if coding in ("gzip", "x-gzip", "deflate") else None
    body = bytearray()
    raw_total = 0
    while True:
        room = limit - len(body)
        want = CHUNK if inflater else min(CHUNK, room + 1)
        data = read(want)
        if not data:
            return BodyRead(bytes(body), truncated=False, complete=True)
        raw_total += len(data)
        if inflater is None:
            if len(data) > room:
                body += data[:room]
                return BodyRead(bytes(body), truncated=True, complete=False)
            body += data
        else:
            out, left_over = inflater.feed(data, room)
            body += out
            if left_over or len(body) >= limit:
                return BodyRead(bytes(body), truncated=True, complete=False)
        if raw_total >= raw_limit:
            return BodyRead(bytes(body), truncated=True, complete=False)
