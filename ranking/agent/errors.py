"""The agent API's errors: what a caller is told, by the MCP server as a tool error and by the
JSON endpoints as a 4xx (:mod:`ranking.agent.mcp_server`, :mod:`ranking.agent.views`)."""

from __future__ import annotations


class ToolArgumentError(ValueError):
    """An argument the tool cannot take; the message says which and why (HTTP 400)."""


class DocumentNotFound(LookupError):
    """No readable page answers the id or url, or its crawl is not open to the caller
    (HTTP 404)."""
