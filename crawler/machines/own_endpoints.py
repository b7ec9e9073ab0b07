"""The engine's own listeners, which the crawler never connects to (issue 34, item 6).

``engine_endpoints()`` gives ``(address or CIDR network, port)`` pairs for
``FetchConfig.refused_endpoints``: the web server (``WEB_BIND``: ``/metrics``, the admin, the
shard API), this machine's queue-server url (``QUEUE_SERVER_BASE_URL``), the remote queue
servers searched (``SEARCH_REMOTE_QUEUE_SERVERS``) and those registered in the database, the
Redis of ``REDIS_URL`` when it listens on TCP, and the database server of ``DATABASE_URL``.
With ``CRAWLER_ALLOWED_NETWORKS`` admitting loopback or private networks (a local web), these
stay out of reach all the same.

How a listener's host becomes networks: a loopback address stands for every loopback address
(127.0.0.0/8 and ::1: a server on one of them is as much the engine's as on another); a wildcard
bind (``0.0.0.0``, ``::``, empty) for loopback and every address of this machine's name; a host
name for the addresses it resolves to (looked up once per process; one that does not resolve
is left out, as nothing can connect to it either).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.db import DatabaseError

from crawler.models import QueueServer

logger = logging.getLogger(__name__)

LOOPBACK = ("127.0.0.0/8", "::1/128")
WILDCARDS = ("", "0.0.0.0", "::", "*")
DEFAULT_PORTS = {"http": 80, "https": 443, "redis": 6379, "rediss": 6379,
                 "postgres": 5432, "postgresql": 5432}


@functools.lru_cache(maxsize=64)
def _resolved(host: str) -> tuple[str, ...]:
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        logger.debug("own endpoint %s does not resolve: %s", host, exc)
        return ()
    return tuple(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))


def host_networks(host: str) -> tuple[str, ...]:
    """The networks (CIDR strings) a listener on ``host`` answers on (module docstring)."""
    host = host.strip().strip("[]").lower()
    if host in WILDCARDS:
        return (*LOOPBACK, *(f"{a}/{32 if ':' not in a else 128}"
                             for a in _resolved(socket.gethostname())))
    try:
        addresses: tuple[str, ...] = (str(ipaddress.ip_address(host)),)
    except ValueError:
        addresses = _resolved(host)
    networks: list[str] = []
    for address in addresses:
        ip = ipaddress.ip_address(address)
        if ip.is_loopback:
            networks.extend(LOOPBACK)
        elif ip.is_unspecified:
            networks.extend(host_networks(""))
        else:
            networks.append(f"{ip}/{ip.max_prefixlen}")
    return tuple(dict.fromkeys(networks))


def _bind_endpoint(bind: str) -> tuple[str, int] | None:
    host, _, port = bind.rpartition(":")
    return (host, int(port)) if port.isdigit() else None


def _url_endpoint(url: str) -> tuple[str, int] | None:
    try:
        parts = urlsplit(url)
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.split("+", 1)[0])
    except ValueError:
        return None
    if not parts.hostname or not port:
        return None  # a unix socket, or not a url
    return parts.hostname, port


def listeners() -> list[tuple[str, int]]:
    """(host, port) of every listener of the engine the settings and the database name."""
    found = [_bind_endpoint(settings.WEB_BIND), _url_endpoint(settings.QUEUE_SERVER_BASE_URL),
             _url_endpoint(settings.REDIS_URL)]
    found += [_url_endpoint(url) for url in settings.SEARCH_REMOTE_QUEUE_SERVERS]
    database = settings.DATABASES["default"]
    if database.get("HOST") and str(database.get("PORT") or "").isdigit():
        found.append((database["HOST"], int(database["PORT"])))
    try:
        urls = list(QueueServer.objects.exclude(base_url="").values_list("base_url", flat=True))
    except DatabaseError as exc:  # no table yet (a fresh database): the settings still count
        logger.debug("registered queue servers unreadable: %s", exc)
        urls = []
    found += [_url_endpoint(url) for url in urls]
    return list(dict.fromkeys(e for e in found if e is not None))


def engine_endpoints() -> tuple[tuple[str, int], ...]:
    """``(network, port)`` pairs of the engine's own listeners, for
    ``FetchConfig.refused_endpoints``."""
    pairs = [(network, port) for host, port in listeners() for network in host_networks(host)]
    return tuple(dict.fromkeys(pairs))
