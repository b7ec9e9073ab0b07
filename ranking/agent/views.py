"""The agent tools as JSON endpoints, for clients that do not speak MCP.

Layer: glue of the ``ranking`` app (Django views). The same tools as the MCP server
(:mod:`ranking.agent.tools`), the same arguments as query parameters (GET) or a JSON object
(POST), the same answers as JSON objects:

* ``/api/agent/search?query=&limit=&site=&language=&passages=``
* ``/api/agent/read?ref=&start=&max_chars=&section=`` (``ref``: a document id or a url;
  ``id`` and ``url`` are taken for it too)
* ``/api/agent/cached?ref=``
* ``/api/agent/context?query=&token_budget=&max_passages_per_url=``

Access as the MCP server's (:func:`ranking.agent.access.refusal`): loopback clients, remote
ones with ``Authorization: Bearer <AGENT_TOKEN>``, no request from another web origin.
Answers: 200 with the tool's object; 400 ``{"error"}`` for a bad argument, 404 for a page or
index that is not there, 401/403 for a refused client, 405 for another method; never a 5xx
for what a client sends.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from indexer.core.errors import CorruptIndexError
from operations.client_address import client_address
from ranking.core.errors import NoIndexError, public_reason

from .access import refusal
from .errors import DocumentNotFound, ToolArgumentError
from .tools import AgentTools, agent_tools

logger = logging.getLogger(__name__)
MAX_BODY = 64 * 1024
ARGUMENTS = {
    "search": ("query", "limit", "site", "language", "passages"),
    "read": ("ref", "start", "max_chars", "section"),
    "cached": ("ref",),
    "context": ("query", "token_budget", "max_passages_per_url"),
}


def _arguments(request: HttpRequest, names: tuple[str, ...]) -> dict[str, Any]:
    if request.method == "POST":
        if len(request.body) > MAX_BODY:
            raise ToolArgumentError("the request body is too large")
        try:
            given = json.loads(request.body or b"{}")
        except (ValueError, UnicodeDecodeError):
            raise ToolArgumentError("the body must be a JSON object") from None
        if not isinstance(given, dict):
            raise ToolArgumentError("the body must be a JSON object")
    else:
        given = {k: request.GET.get(k) for k in request.GET}
    if "ref" in names and not given.get("ref"):
        given["ref"] = given.get("id") or given.get("url")
    unknown = sorted(set(given) - set(names) - {"id", "url"})
    if unknown:
        raise ToolArgumentError(f"unknown arguments: {', '.join(map(str, unknown))}; this "
                                f"tool takes {', '.join(names)}")
    return {k: given[k] for k in names if given.get(k) is not None}


def _endpoint(name: str) -> Callable[[HttpRequest], JsonResponse]:
    @csrf_exempt  # no cookie is read: access is by address or token (see the module)
    def view(request: HttpRequest) -> JsonResponse:
        if request.method not in ("GET", "POST"):
            return JsonResponse({"error": "use GET or POST"}, status=405)
        own = f"{request.scheme}://{request.get_host()}"
        refused = refusal(client_address(request), request.headers.get("Authorization"),
                          request.headers.get("Origin"), own, settings.AGENT_TOKEN,
                          settings.AGENT_ALLOWED_ORIGINS)
        if refused is not None:
            return JsonResponse({"error": refused.reason}, status=refused.status)
        tools: AgentTools = agent_tools()
        try:
            answer = getattr(tools, name)(**_arguments(request, ARGUMENTS[name]))
        except ToolArgumentError as exc:
            return JsonResponse({"error": str(exc)}, status=400)
        except DocumentNotFound as exc:
            return JsonResponse({"error": str(exc)}, status=404)
        except (NoIndexError, CorruptIndexError) as exc:
            logger.warning("agent %s: %s", name, exc)
            return JsonResponse({"error": public_reason(exc)}, status=404)
        return JsonResponse(answer, json_dumps_params={"ensure_ascii": False})

    view.__name__ = f"agent_{name}"
    return view


search = _endpoint("search")
read = _endpoint("read")
cached = _endpoint("cached")
context = _endpoint("context")
