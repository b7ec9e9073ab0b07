"""Who may call the agent API: loopback clients, or remote ones with the token; never a web
page of another origin.

Layer: glue of the ``ranking`` app, but plain Python (no Django): the JSON endpoints
(:mod:`ranking.agent.views`, client address from :mod:`operations.client_address`) and the MCP
server's HTTP transport (:mod:`ranking.agent.mcp_server`, the ASGI scope's peer) ask the same
:func:`refusal`.

The rules, in order:

1. a request with an ``Origin`` header (a browser's cross-origin request, or any request a web
   page makes) is refused unless that origin is one of ``allowed_origins`` or the request's
   own (scheme and ``Host``): a page on another site cannot make a visitor's browser call an
   engine on the visitor's machine or network (DNS rebinding, cross-site requests);
2. with ``token`` set, a request carrying ``Authorization: Bearer <token>`` is let in from
   anywhere (compared in constant time);
3. otherwise only a client on a loopback address is let in: remote use needs the token
   (settings ``AGENT_TOKEN``), and without one set, no remote client is served.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Refusal:
    """An HTTP ``status`` and the ``reason`` told to the client."""

    status: int
    reason: str


def is_loopback(address: str | None) -> bool:
    try:
        return ipaddress.ip_address((address or "").strip("[]")).is_loopback
    except ValueError:
        return False


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, else None."""
    scheme, _, value = (authorization or "").strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def refusal(client: str | None, authorization: str | None, origin: str | None,
            own_origin: str, token: str, allowed_origins: Collection[str]) -> Refusal | None:
    """None when the request may be served, else why not (see the module docstring).
    ``client``: the client's address; ``own_origin``: ``scheme://host[:port]`` as the
    request named this server."""
    if origin is not None:
        wanted = origin.strip().rstrip("/").lower()
        allowed = {o.strip().rstrip("/").lower() for o in allowed_origins}
        if wanted != own_origin.lower() and wanted not in allowed:
            return Refusal(403, "requests from this origin are not allowed "
                                "(AGENT_ALLOWED_ORIGINS)")
    given = bearer(authorization)
    if token and given is not None:
        if hmac.compare_digest(given.encode(), token.encode()):
            return None
        return Refusal(401, "the token is not the agent API's")
    if is_loopback(client):
        return None
    if not token:
        return Refusal(403, "the agent API serves remote clients only with a token, and "
                            "none is set (AGENT_TOKEN)")
    return Refusal(401, "remote use of the agent API needs Authorization: Bearer <token>")
