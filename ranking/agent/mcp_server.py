"""The agent API as an MCP server (the official Python SDK, ``mcp``).

Layer: glue of the ``ranking`` app. :func:`mcp_server` registers the four tools of
:mod:`ranking.agent.tools` (``search``, ``read``, ``cached``, ``context``) on an
:class:`mcp.server.mcpserver.MCPServer`; each answers the tool's JSON object as structured
content, and a bad argument, a page that is not there or an index that cannot be read as a
tool error with its message (never a crash of the session). The tools are synchronous (they
read the index and the database) and the SDK runs them in worker threads.

Transports (``manage.py run_mcp_server``, which ``manage.py up`` starts):

* streamable HTTP at ``/mcp`` (:func:`http_app`): the SDK's app inside
  :class:`AccessMiddleware`, which asks :func:`ranking.agent.access.refusal` of every request
  (loopback clients, or remote ones with the token; no request from another web origin), and
  the SDK's own DNS-rebinding check of the ``Host`` header against ``ALLOWED_HOSTS``;
* stdio, for a client that starts the server itself (one client, no network).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from indexer.core.errors import CorruptIndexError
from ranking.core.errors import NoIndexError, public_reason

from .access import refusal
from .errors import DocumentNotFound, ToolArgumentError
from .tools import MAX_BUDGET, MAX_PASSAGES, MAX_READ, MAX_RESULTS, AgentTools

INSTRUCTIONS = (
    "Search this engine's own index. search finds pages (each with a stable document id, "
    "url, title and crawl date; passages=N adds the N best passages), read gives a page's "
    "crawled copy as Markdown in pages of text (start, max_chars, or a section's heading), "
    "cached gives the original crawl-time copy, and context packs the best passages for a "
    "query into a token budget. Every passage's start and end are character offsets into "
    "the page's text as read and cached give it: cite the id, url and crawl date.")


def _call(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return run()
    except (ToolArgumentError, DocumentNotFound) as exc:
        raise ToolError(str(exc)) from exc
    except (NoIndexError, CorruptIndexError) as exc:
        raise ToolError(public_reason(exc)) from exc


def mcp_server(tools: AgentTools) -> MCPServer:
    """An MCP server whose tools call ``tools``."""
    server: MCPServer = MCPServer(name="yioopy", title="Yioopy search",
                                  instructions=INSTRUCTIONS)

    @server.tool(name="search", description=(
        f"Search the index. limit: 1 to {MAX_RESULTS} results; site: a host name to search "
        "within; language: a code such as en; passages: 0 to "
        f"{MAX_PASSAGES} best passages of each result, with character offsets."))
    def search(query: str, limit: int = 10, site: str = "", language: str = "",
               passages: int = 0) -> dict[str, Any]:
        return _call(lambda: tools.search(query, limit, site, language, passages))

    @server.tool(name="read", description=(
        "A page's crawled copy as clean Markdown, paged: ref is a document id from search "
        f"or a url; start a character offset; max_chars at most {MAX_READ}; section a "
        "heading's title (reads that section). next_start continues; sections lists the "
        "headings."))
    def read(ref: str, start: int = 0, max_chars: int = 4000, section: str = ""
             ) -> dict[str, Any]:
        return _call(lambda: tools.read(ref, start, max_chars, section))

    @server.tool(name="cached", description=(
        "The original copy of a page as crawled (decoded to text) and its crawl date, with "
        "the Markdown text that passages' offsets point into. ref: a document id or url."))
    def cached(ref: str) -> dict[str, Any]:
        return _call(lambda: tools.cached(ref))

    @server.tool(name="context", description=(
        "The best passages for a query packed into a token budget (at most "
        f"{MAX_BUDGET}), at most max_passages_per_url from one page; each with its "
        "document id, url, crawl date and character offsets into the page's cached text."))
    def context(query: str, token_budget: int = 2000, max_passages_per_url: int = 2
                ) -> dict[str, Any]:
        return _call(lambda: tools.context(query, token_budget, max_passages_per_url))

    return server


class AccessMiddleware:
    """Refuses an HTTP request :func:`ranking.agent.access.refusal` refuses (a JSON error
    with its status) before the MCP transport sees it."""

    def __init__(self, app: ASGIApp, token: str, allowed_origins: Collection[str]) -> None:
        self.app = app
        self.token = token
        self.allowed_origins = tuple(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", ())}
        client = (scope.get("client") or ("", 0))[0]
        own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
        refused = refusal(client, headers.get("authorization"), headers.get("origin"), own,
                          self.token, self.allowed_origins)
        if refused is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": refused.reason}).encode()
        await send({"type": "http.response.start", "status": refused.status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def allowed_hosts(django_hosts: Collection[str], bind_host: str) -> list[str]:
    """The ``Host`` values the SDK's DNS-rebinding check accepts: Django's ALLOWED_HOSTS and
    the address bound, each with any port (a leading-dot or ``*`` entry of Django's, which
    the SDK cannot express, turns the check off: Django's own setting then allows any)."""
    hosts = [h for h in (*django_hosts, bind_host, "127.0.0.1", "localhost", "[::1]") if h]
    if any(h == "*" or h.startswith(".") for h in hosts):
        return []
    return sorted({v for h in hosts for v in (h, f"{h}:*")})


def http_app(server: MCPServer, token: str, allowed_origins: Collection[str],
             hosts: list[str]) -> ASGIApp:
    """The streamable HTTP app at ``/mcp`` inside :class:`AccessMiddleware`."""
    security = TransportSecuritySettings(enable_dns_rebinding_protection=bool(hosts),
                                         allowed_hosts=hosts,
                                         allowed_origins=["*"] if not hosts else
                                         [*allowed_origins, *(f"http://{h}" for h in hosts),
                                          *(f"https://{h}" for h in hosts)])
    app = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True,
                                     json_response=True, transport_security=security)
    return AccessMiddleware(app, token, allowed_origins)
