"""The shared token that machines of one deployment show each other: a queue server's endpoints
(shard search and summaries, link records and scores) answer only a request that carries it.

Layer: ``indexer.core`` (pure Python), below the clients and servers that use it: search's
shard client and endpoints (``ranking``) and link analysis's (``linkgraph``). The glue passes
in the expected token (``settings.QUEUE_SERVER_TOKEN``).

The token travels only in the :data:`TOKEN_HEADER` header: a request that puts one in its url
(``?token=``) is refused even when the header is right, because urls are written to access logs
(the web server's, a reverse proxy's) where the token would be read by whoever reads them.
"""

from __future__ import annotations

import hmac
from collections.abc import Container

TOKEN_HEADER = "X-Shard-Token"  # the header a client sends the token in
TOKEN_PARAMETER = "token"  # the url parameter that is refused
TOKEN_IN_URL = (f"the shard token is accepted only in the {TOKEN_HEADER} header, never in the "
                f"url (?{TOKEN_PARAMETER}=): urls are written to access logs")
WRONG_TOKEN = "missing or wrong shard token"


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
