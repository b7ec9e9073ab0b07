"""Messages between the name server, fetchers and queue servers: sharding and signed envelopes.

Layer: ``crawler.core``. Celery carries the envelopes (JSON only); this module decides what is in
them and checks that they come from a process that knows the shared QUEUE_SERVER_TOKEN, that
they were sealed recently, and that none is acted on twice. The glue (``crawler.tasks``) gives
it the token, the time window and a store of handled ids (:class:`SeenIds`, in Redis).

* Sharding: which queue server owns a url is :func:`indexer.core.urls.server_of_url`.
* Envelope, version 2: ``{"v": 2, "head": <JSON text>, "body": <base64 of zlib(JSON)>,
  "sig": <hex HMAC-SHA256>}``. The head is ``{"kind", "id", "issued", "route"}``: the message's
  kind, a random id (32 hex digits) unique to this envelope, the time it was sealed (Unix
  seconds) and its route (the queue server and crawl it is for: what decides where the
  receiver acts). The signature covers the version, the head's exact text and the compressed
  body, so no field that routes, dates or identifies a message can be changed, and a message
  cannot be passed off as another kind. Bodies are compressed because shipped batches
  (summaries, the mini inverted index, cached pages) are large and repetitive. Version 1
  envelopes (no id, time or signed route) are refused.
* Replays: :class:`ReplayGuard` refuses an envelope sealed more than ``max_age`` seconds ago
  (or that far in the future) and one whose id was already handled; ids are recorded once
  their message has been handled, and kept until the envelope is too old anyway. A message
  whose handling did not finish (its worker died) is therefore admitted again when the
  broker redelivers it: nothing accepted is lost.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import secrets
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

ENVELOPE_VERSION = 2
MAX_BODY_BYTES = 512 * 1024 * 1024  # refuse to inflate a body beyond this
MAX_HEAD_CHARS = 4096
ID_HEX_DIGITS = 32
# Kept ids outlive their envelope's window by this much, so that a receiver whose clock runs
# behind the one that recorded an id still finds it.
CLOCK_SLACK = 300.0

RouteValue = int | str


class EnvelopeError(ValueError):
    """A message that is malformed, too large, not signed with the shared token, too old, or
    already handled."""


class SeenIdsUnavailable(RuntimeError):
    """The store of handled ids could not answer; the message is neither refused nor acted on
    (the glue retries it later)."""


@dataclass(frozen=True, slots=True)
class Opened:
    """An envelope whose signature checked out: every field here is what the sealer wrote."""

    kind: str
    id: str
    issued: float
    route: Mapping[str, RouteValue]
    raw: bytes  # the body's JSON text, unparsed

    def payload(self) -> Any:
        try:
            return json.loads(self.raw)
        except ValueError as exc:
            raise EnvelopeError(f"body is not JSON: {exc}") from None

    def route_int(self, key: str) -> int:
        """The integer ``key`` of the signed route; raise :class:`EnvelopeError`."""
        value = self.route.get(key)
        if type(value) is not int:
            raise EnvelopeError(f"the signed route has no integer {key!r}")
        return value


def _signature(token: str, head: bytes, body: bytes) -> str:
    if not token:
        raise EnvelopeError("no shared token configured")
    mac = hmac.new(token.encode(), digestmod=hashlib.sha256)
    mac.update(f"envelope:{ENVELOPE_VERSION}:{len(head)}:".encode())
    mac.update(head)
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


def seal(kind: str, payload: Any, token: str, *, route: Mapping[str, RouteValue] | None = None,
         level: int = 3, now: float | None = None) -> dict[str, Any]:
    """Wrap a JSON-serialisable ``payload`` into a signed, compressed envelope with a fresh id,
    the time ``now`` (default: the clock) and ``route``.

    The JSON text is compressed as it is made, a slice of a long list at a time: a batch of
    thousands of documents never exists whole as text (a fetcher's peak memory rose by several
    times a batch's size while sealing it)."""
    if not token:
        raise EnvelopeError("no shared token configured")
    head = _json({"kind": kind, "id": secrets.token_hex(ID_HEX_DIGITS // 2),
                  "issued": time.time() if now is None else float(now),
                  "route": dict(route or {})}).encode()
    compressor = zlib.compressobj(level)
    parts = [compressor.compress(piece.encode()) for piece in _json_pieces(payload)]
    parts.append(compressor.flush())
    body = b"".join(parts)
    del parts
    return {"v": ENVELOPE_VERSION, "head": head.decode(),
            "body": base64.b64encode(body).decode("ascii"),
            "sig": _signature(token, head, body)}


def _head_fields(head: Any) -> tuple[str, str, float, dict[str, RouteValue]]:
    """(kind, id, issued, route) of a signed head; raise :class:`EnvelopeError` on a bad one."""
    if not isinstance(head, dict):
        raise EnvelopeError("the head is not an object")
    kind, ident, issued, route = (head.get(k) for k in ("kind", "id", "issued", "route"))
    if not isinstance(kind, str):
        raise EnvelopeError("the head has no kind")
    if (not isinstance(ident, str) or len(ident) != ID_HEX_DIGITS
            or not all(c in "0123456789abcdef" for c in ident)):
        raise EnvelopeError("the head has no valid id")
    if type(issued) not in (int, float) or not math.isfinite(issued):
        raise EnvelopeError("the head has no issue time")
    if not isinstance(route, dict) or not all(
            type(v) in (int, str) for v in route.values()):
        raise EnvelopeError("the head's route is not a map of numbers and names")
    return kind, ident, float(issued), route


def open_envelope(message: Any, token: str, kind: str) -> Opened:
    """Check an envelope's signature and kind, and inflate its body (unparsed: a queue
    server's inbox stores it as it is); raise :class:`EnvelopeError`. Freshness and replays
    are :class:`ReplayGuard`'s."""
    if not isinstance(message, dict) or message.get("v") != ENVELOPE_VERSION:
        raise EnvelopeError("not an envelope of a known version")
    head_text = message.get("head")
    if not isinstance(head_text, str) or len(head_text) > MAX_HEAD_CHARS:
        raise EnvelopeError("malformed head")
    try:
        body = base64.b64decode(message["body"], validate=True)
    except (KeyError, ValueError, TypeError) as exc:
        raise EnvelopeError(f"malformed body: {exc}") from None
    head = head_text.encode()
    signature = message.get("sig")
    if not isinstance(signature, str) or not hmac.compare_digest(
            signature, _signature(token, head, body)):
        raise EnvelopeError("bad signature: the message does not carry the shared token")
    try:
        got, ident, issued, route = _head_fields(json.loads(head))
    except ValueError as exc:
        raise EnvelopeError(f"malformed head: {exc}") from None
    if got != kind:
        raise EnvelopeError(f"expected a {kind!r} message, got {got!r}")
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(body, MAX_BODY_BYTES)
    except zlib.error as exc:
        raise EnvelopeError(f"corrupt body: {exc}") from None
    if inflater.unconsumed_tail:
        raise EnvelopeError("body inflates beyond the size limit")
    return Opened(kind, ident, issued, route, raw)


class SeenIds(Protocol):
    """The ids of envelopes already handled, shared by every receiver of the engine."""

    def seen(self, envelope_id: str) -> bool:
        """Whether ``envelope_id`` was recorded (and has not expired); may raise
        :class:`SeenIdsUnavailable`."""
        ...

    def record(self, envelope_id: str, ttl: float) -> bool:
        """Record ``envelope_id`` for ``ttl`` seconds unless it is there already (set if not
        exists); True when this call recorded it. May raise :class:`SeenIdsUnavailable`."""
        ...


class ReplayGuard:
    """Freshness and once-only handling of opened envelopes.

    Call order for each message: :meth:`admit` before acting on it, :meth:`handled` after.
    ``max_age`` (seconds) must be longer than any wait a legitimate message has in the broker
    (a redelivery after a worker died, a queue server that was stopped), since an older one is
    refused; ids are kept for ``max_age`` after their issue time (plus :data:`CLOCK_SLACK`).
    """

    def __init__(self, seen: SeenIds, max_age: float,
                 clock: Callable[[], float] = time.time) -> None:
        if max_age <= 0:
            raise ValueError("max_age must be positive")
        self.seen = seen
        self.max_age = max_age
        self.clock = clock

    def admit(self, opened: Opened) -> None:
        """Raise :class:`EnvelopeError` unless ``opened`` is fresh and not yet handled."""
        age = self.clock() - opened.issued
        if age > self.max_age:
            raise EnvelopeError(f"{opened.kind} envelope {opened.id} was sealed {age:.0f} s ago, "
                                f"more than the {self.max_age:.0f} s it may wait")
        if -age > self.max_age:
            raise EnvelopeError(f"{opened.kind} envelope {opened.id} is dated {-age:.0f} s in "
                                "the future")
        if self.seen.seen(opened.id):
            raise EnvelopeError(f"{opened.kind} envelope {opened.id} was handled already: a "
                                "replay")

    def handled(self, opened: Opened) -> bool:
        """Record that ``opened`` has been acted on; False when its id was recorded already
        (a copy was handled at the same time)."""
        ttl = opened.issued + self.max_age - self.clock() + CLOCK_SLACK
        return self.seen.record(opened.id, max(ttl, 1.0))
