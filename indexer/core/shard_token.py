"""The shared token that machines of one deployment show each other: a queue server's endpoints
(shard search and summaries, link records and scores) answer only a request that carries it.

Layer: ``indexer.core`` (pure Python), below the clients and servers that use it: search's
shard client and endpoints (``ranking``) and link analysis's (``linkgraph``). The glue passes
in the expected token (``settings.QUEUE_SERVER_TOKEN``).
"""

from __future__ import annotations

import hmac

TOKEN_HEADER = "X-Shard-Token"  # the header a client sends the token in


def token_ok(expected: str, given: str | None) -> bool:
    """True when ``given`` is the (non-empty) ``expected`` token, compared in constant time."""
    return bool(expected) and given is not None and hmac.compare_digest(
        expected.encode(), given.encode())
