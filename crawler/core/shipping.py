"""Messages between the name server, fetchers and queue servers: sharding and signed envelopes.

Layer: ``crawler.core``. Celery carries the envelopes (JSON only); this module decides what is in
them and checks that they come from a process that knows the shared QUEUE_SERVER_TOKEN.

* Sharding: a url belongs to queue server ``first 4 bytes of hash8(host), big-endian, mod n``,
  so every url of a host, and all of that host's politeness state, lives on one queue server.
* Envelope: ``{"v": 1, "kind": ..., "body": <base64 of zlib(JSON)>, "sig": <hex HMAC-SHA256>}``.
  The signature covers the version, the kind and the compressed body, so a message cannot be
  replayed as another kind. Bodies are compressed because shipped batches (summaries, the mini
  inverted index, cached pages) are large and repetitive.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import zlib
from collections.abc import Iterator
from typing import Any

from indexer.core.ids import hash8

ENVELOPE_VERSION = 1
MAX_BODY_BYTES = 512 * 1024 * 1024  # refuse to inflate a body beyond this


class EnvelopeError(ValueError):
    """A message that is malformed, too large, or not signed with the shared token."""


def shard_of_host(host: str, num_shards: int) -> int:
    """The queue server (0 .. num_shards - 1) that owns ``host``."""
    if num_shards < 1:
        raise ValueError("there must be at least one queue server")
    return int.from_bytes(hash8(host.lower())[:4], "big") % num_shards


def _signature(token: str, kind: str, body: bytes) -> str:
    if not token:
        raise EnvelopeError("no shared token configured")
    mac = hmac.new(token.encode(), digestmod=hashlib.sha256)
    mac.update(f"{ENVELOPE_VERSION}:{kind}:".encode())
    mac.update(body)
    return mac.hexdigest()


SEAL_SLICE = 256  # list items turned into JSON text, and compressed, at a time


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _json_pieces(payload: Any) -> Iterator[str]:
    """The compact JSON text of ``payload`` in pieces: a dict's long lists a slice of items at
    a time (the pieces joined are exactly ``_json(payload)``)."""
    if not isinstance(payload, dict):
        yield _json(payload)
        return
    yield "{"
    for i, (key, value) in enumerate(payload.items()):
        yield ("," if i else "") + _json(key) + ":"
        if isinstance(value, list) and len(value) > SEAL_SLICE:
            yield "["
            for at in range(0, len(value), SEAL_SLICE):
                yield ("," if at else "") + _json(value[at:at + SEAL_SLICE])[1:-1]
            yield "]"
        else:
            yield _json(value)
    yield "}"


def seal(kind: str, payload: Any, token: str, level: int = 3) -> dict[str, Any]:
    """Wrap a JSON-serialisable ``payload`` into a signed, compressed envelope.

    The JSON text is compressed as it is made, a slice of a long list at a time: a batch of
    thousands of documents never exists whole as text (a fetcher's peak memory rose by several
    times a batch's size while sealing it)."""
    compressor = zlib.compressobj(level)
    parts = [compressor.compress(piece.encode()) for piece in _json_pieces(payload)]
    parts.append(compressor.flush())
    body = b"".join(parts)
    del parts
    return {"v": ENVELOPE_VERSION, "kind": kind,
            "body": base64.b64encode(body).decode("ascii"),
            "sig": _signature(token, kind, body)}


def open_envelope_raw(message: Any, token: str, kind: str) -> bytes:
    """Check an envelope of the expected ``kind`` and return its body's JSON text, unparsed
    (a queue server's inbox stores it as it is); raise :class:`EnvelopeError`."""
    if not isinstance(message, dict) or message.get("v") != ENVELOPE_VERSION:
        raise EnvelopeError("not an envelope of a known version")
    if message.get("kind") != kind:
        raise EnvelopeError(f"expected a {kind!r} message, got {message.get('kind')!r}")
    try:
        body = base64.b64decode(message["body"], validate=True)
    except (KeyError, ValueError, TypeError) as exc:
        raise EnvelopeError(f"malformed body: {exc}") from None
    signature = message.get("sig")
    if not isinstance(signature, str) or not hmac.compare_digest(
            signature, _signature(token, kind, body)):
        raise EnvelopeError("bad signature: the message does not carry the shared token")
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(body, MAX_BODY_BYTES)
    except zlib.error as exc:
        raise EnvelopeError(f"corrupt body: {exc}") from None
    if inflater.unconsumed_tail:
        raise EnvelopeError("body inflates beyond the size limit")
    return raw


def open_envelope(message: Any, token: str, kind: str) -> Any:
    """Check and unwrap an envelope of the expected ``kind``; raise :class:`EnvelopeError`."""
    raw = open_envelope_raw(message, token, kind)
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise EnvelopeError(f"body is not JSON: {exc}") from None
