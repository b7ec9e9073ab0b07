"""``manage.py run_mcp_server [--bind HOST:PORT | --stdio]``: the agent API's MCP server.

Glue for :mod:`ranking.agent.mcp_server`. With ``--stdio`` it serves one client over its
stdin and stdout (an MCP client that starts the server itself: Claude Desktop, an agent
framework's stdio transport), nothing on the network. Otherwise it serves streamable HTTP at
``http://HOST:PORT/mcp`` (default ``MCP_BIND``, loopback) with uvicorn, until SIGTERM or
Ctrl-C; ``manage.py up`` runs it so, as the child ``mcp``. Its logging goes to stderr: on
stdio, stdout carries the protocol only.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ranking.agent.mcp_server import allowed_hosts, http_app, mcp_server
from ranking.agent.tools import agent_tools


def split_bind(bind: str) -> tuple[str, int]:
    """(host, port) of ``HOST:PORT`` (``[::1]:PORT`` too); raises CommandError."""
    host, _, port = bind.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CommandError(f"--bind must be host:port, got {bind!r}")
    return host.strip("[]"), int(port)


class Command(BaseCommand):
    help = "Serve the agent API (search, read, cached, context) as an MCP server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default=settings.MCP_BIND,
                            help="host:port of the streamable HTTP server (default MCP_BIND)")
        parser.add_argument("--stdio", action="store_true",
                            help="serve one client on stdin/stdout instead")

    def handle(self, *args: Any, **options: Any) -> None:
        server = mcp_server(agent_tools())
        if options["stdio"]:
            logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
            server.run("stdio")
            return
        if not options["bind"]:
            raise CommandError("no address to serve on: give --bind or set MCP_BIND")
        host, port = split_bind(options["bind"])
        if not settings.AGENT_TOKEN and host not in ("127.0.0.1", "localhost", "::1"):
            self.stderr.write("AGENT_TOKEN is not set: only clients on this machine will be "
                              "served")
        app = http_app(server, settings.AGENT_TOKEN, settings.AGENT_ALLOWED_ORIGINS,
                       allowed_hosts(settings.ALLOWED_HOSTS, host))
        self.stdout.write(f"MCP server at http://{options['bind']}/mcp")
        self.stdout.flush()
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
