"""The address of the client a web request came from, as far as this server can trust it.

``client_address(request)`` is the socket's peer (``REMOTE_ADDR``), unless that peer is one of
the reverse proxies named in ``TRUSTED_PROXIES`` (addresses or CIDR networks) and the request
carries the header named by ``LOGIN_CLIENT_ADDRESS_HEADER`` (a Django META name such as
``HTTP_X_FORWARDED_FOR``): then it is the header's last entry that is not itself a trusted
proxy, read from the right, where each proxy appended the address it saw. A client that is not
a trusted proxy cannot choose its address with the header: it is ignored (issue 34: a forged
``X-Forwarded-For: 127.0.0.1`` opened ``/metrics``). An entry that is not an IP address ends
the walk at the last trusted hop: the proxy's own address is answered, not the client's word.

``/metrics`` (its loopback test), the admin login throttle and the query log's per-client bound
all read it. ``client_address_header_check`` (a system check) warns when the header is named
but no proxy is trusted. Layer: operations (the bottom layer), so that every app may call it.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable

from django.conf import settings
from django.core import checks
from django.http import HttpRequest

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
UNKNOWN = "unknown"


def parse_networks(entries: Iterable[str]) -> tuple[IPNetwork, ...]:
    """``entries`` (addresses or CIDR networks) as networks; raises ``ValueError`` naming a bad
    one."""
    networks = []
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"TRUSTED_PROXIES: {text!r} is neither an address nor a CIDR "
                             "network") from None
    return tuple(networks)


_proxy_networks = functools.lru_cache(maxsize=8)(parse_networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None,
             proxies: tuple[IPNetwork, ...]) -> bool:
    return address is not None and any(
        address.version == net.version and address in net for net in proxies)


def peer_address(request: HttpRequest | None) -> str:
    """The socket's peer as the web server saw it (``REMOTE_ADDR``), or ``"unknown"``."""
    if request is None:
        return UNKNOWN
    return request.META.get("REMOTE_ADDR") or UNKNOWN


def client_address(request: HttpRequest | None) -> str:
    """The client's address (see the module docstring), or ``"unknown"`` without a request."""
    peer = peer_address(request)
    header = settings.LOGIN_CLIENT_ADDRESS_HEADER
    proxies = _proxy_networks(tuple(settings.TRUSTED_PROXIES))
    if request is None or not header or not proxies or not _trusted(_address(peer), proxies):
        return peer
    client = peer
    for entry in reversed(request.META.get(header, "").split(",")):
        address = _address(entry)
        if address is None:
            break
        client = str(address)
        if not _trusted(address, proxies):
            break
    return client


def client_address_header_check(app_configs, **kwargs) -> list[checks.CheckMessage]:
    """A warning (``yioopy.W002``) when ``LOGIN_CLIENT_ADDRESS_HEADER`` is set but no
    ``TRUSTED_PROXIES``: the header is then never read, and every client behind the proxy
    shares the proxy's address (and its login lockout)."""
    if not settings.LOGIN_CLIENT_ADDRESS_HEADER or settings.TRUSTED_PROXIES:
        return []
    return [checks.Warning(
        "LOGIN_CLIENT_ADDRESS_HEADER is set but TRUSTED_PROXIES is empty: the header is "
        "ignored, since any client could send it.",
        hint="Set TRUSTED_PROXIES to the reverse proxy's address (e.g. 127.0.0.1).",
        id="yioopy.W002")]
