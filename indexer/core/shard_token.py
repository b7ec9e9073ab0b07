"""The shared token that machines of one deployment show each other: a queue server's endpoints
(shard search and summaries, link records and scores) answer only a request that carries it.

Layer: ``indexer.core`` (pure Python), below the clients and servers that use it: search's
shard client and endpoints (``ranking``), link analysis's (``linkgraph``) and the crawl messages
and queue-server rows (``crawler``). The glue passes in the keys it derives here from
``settings.QUEUE_SERVER_TOKEN``.

One configured secret (``QUEUE_SERVER_TOKEN``), three keys derived from it with HMAC-SHA256
under distinct labels (:func:`derived_key`), so that no key opens what another does:

* :func:`shard_bearer`, the token a shard request carries (the only one that travels);
* :func:`message_key`, what signs crawl messages (``crawler.core.transport.shipping``): whoever
  sees a bearer (a queue server's access log, an address a row pointed to) cannot forge them;
* :func:`registration_signature`, what a queue server's heartbeat signs its number and url
  with: a search sends the bearer only to a queue server whose row carries a valid one (or that
  the operator declared), not to whatever address someone wrote into the row.

The token travels only in the :data:`TOKEN_HEADER` header: a request that puts one in its url
(``?token=``) is refused even when the header is right, because urls are written to access logs
(the web server's, a reverse proxy's) where the token would be read by whoever reads them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Container

TOKEN_HEADER = "X-Shard-Token"  # the header a client sends the token in
TOKEN_PARAMETER = "token"  # the url parameter that is refused
TOKEN_IN_URL = (f"the shard token is accepted only in the {TOKEN_HEADER} header, never in the "
                f"url (?{TOKEN_PARAMETER}=): urls are written to access logs")
WRONG_TOKEN = "missing or wrong shard token"


SHARD_API_LABEL = "yioopy shard api bearer v1"
MESSAGE_LABEL = "yioopy crawl message signing v1"
REGISTRATION_LABEL = "yioopy queue server registration v1"


def derived_key(secret: str, label: str) -> str:
    """HMAC-SHA256 of ``label`` under ``secret``, in hex: a key for one use only. An empty
    ``secret`` gives an empty key (what checks refuse as "no token configured")."""
    if not secret:
        return ""
    return hmac.new(secret.encode(), label.encode(), hashlib.sha256).hexdigest()


def shard_bearer(secret: str) -> str:
    """The token shard requests carry in :data:`TOKEN_HEADER` (and endpoints expect)."""
    return derived_key(secret, SHARD_API_LABEL)


def message_key(secret: str) -> str:
    """The key crawl messages are signed and checked with."""
    return derived_key(secret, MESSAGE_LABEL)


def registration_signature(secret: str, server: int, base_url: str) -> str:
    """What queue server ``server`` registers ``base_url`` with (its heartbeat): an HMAC of
    both under the registration key; empty without a secret."""
    key = derived_key(secret, REGISTRATION_LABEL)
    if not key:
        return ""
    return hmac.new(key.encode(), f"{server}\n{base_url}".encode(), hashlib.sha256).hexdigest()


def registration_ok(secret: str, server: int, base_url: str, signature: str) -> bool:
    """Whether ``signature`` is :func:`registration_signature` of ``server`` and ``base_url``."""
    expected = registration_signature(secret, server, base_url)
    return bool(expected) and hmac.compare_digest(expected.encode(), signature.encode())


def token_ok(expected: str, given: str | None) -> bool:
    """True when ``given`` is the (non-empty) ``expected`` token, compared in constant time."""
    return bool(expected) and given is not None and hmac.compare_digest(
        expected.encode(), given.encode())


def shard_request_refusal(expected: str, header: str | None, parameters: Container[str]
                          ) -> str | None:
    """Why a shard request must be answered 403, or None when it may go on: ``header`` is the
    value of :data:`TOKEN_HEADER` (None when absent), ``parameters`` the url's parameter names."""
    if TOKEN_PARAMETER in parameters:
        return TOKEN_IN_URL
    if not token_ok(expected, header):
        return WRONG_TOKEN
    return None
