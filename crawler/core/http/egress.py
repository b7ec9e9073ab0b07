"""Egress policy: which IP addresses the crawler may connect to.

Layer: ``crawler.core.http``. :class:`EgressPolicy` is built once from
``FetchConfig.allowed_networks`` and consulted by the transport (``transport.py``) for every
new connection, after it has resolved the host itself and before it connects, on the first
request and on every redirect hop. The transport then connects to the vetted address, never
to a name, so a DNS answer that changes between check and connect (DNS rebinding) cannot
redirect the connection.

Entries of ``allowed_networks`` are CIDR strings (``"127.0.0.0/8"``, ``"::1/128"``, a bare
address) or the word ``"public"``: every globally routable unicast address, which excludes
loopback, private (RFC 1918, ULA), link-local, CGNAT (100.64/10), multicast, reserved,
documentation and benchmarking ranges, and IPv6 forms that embed such an IPv4 address
(IPv4-mapped, 6to4, Teredo). The NAT64 prefix ``64:ff9b::/96`` lies in the reserved ``::/8``
and is refused as a whole: a NAT64 host must list it explicitly.

Refused endpoints (``FetchConfig.refused_endpoints``: ``(network, port)`` pairs) are the
engine's own listeners: its web server (``/metrics``, the shard API, the admin), its Redis, its
queue servers. A connection to an address inside such a network on such a port is refused even
when the allow-list admits the address (a crawl of a local web with loopback allowed must not
index the engine's own ``/metrics``); :meth:`EgressPolicy.vet` drops those addresses.

Addresses are normalised before the test: an IPv4-mapped IPv6 address (``::ffff:127.0.0.1``)
is judged, and connected to, as its IPv4 address; an IPv6 zone id (``fe80::1%eth0``) is
dropped for the test.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from crawler.core.http.errors import DnsError, EgressRefused, FetchConfigError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

PUBLIC = "public"

Resolver = Callable[[str, int], Sequence[str]]
"""``resolver(host, port) -> addresses`` (strings, in preference order). Raises
:class:`~crawler.core.http.errors.DnsError` when the name does not resolve."""

# Ranges that Python's ``is_global`` (3.11) still calls global but that no crawler should
# reach: multicast, "future use", IETF protocol assignments, the deprecated 6to4 relay anycast,
# IPv6 site-local and NAT64 local-use.
_NOT_PUBLIC = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.88.99.0/24", "198.18.0.0/15",
    "224.0.0.0/4", "240.0.0.0/4",
    "ff00::/8", "fec0::/10", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def parse_address(address: str | IPAddress) -> IPAddress:
    """``address`` as an IP address object, normalised (zone id dropped, IPv4-mapped -> IPv4).

    Raises ``ValueError`` for something that is not an address.
    """
    if isinstance(address, str):
        address = ipaddress.ip_address(address.split("%", 1)[0].strip("[]"))
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            address = ipaddress.IPv6Address(str(address).split("%", 1)[0])
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
    return address


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries (and could route to): 6to4, Teredo, NAT64."""
    found: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if address in _NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def is_public(address: str | IPAddress) -> bool:
    """True for a globally routable unicast address (see the module docstring)."""
    ip = parse_address(address)
    if not ip.is_global:
        return False
    if (ip.is_multicast or ip.is_reserved or ip.is_loopback or ip.is_link_local
            or ip.is_private or ip.is_unspecified):
        return False
    if any(ip in net for net in _NOT_PUBLIC if net.version == ip.version):
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.is_site_local:
            return False
        return all(is_public(v4) for v4 in _embedded_ipv4(ip))
    return True


@dataclass(frozen=True, slots=True)
class EgressPolicy:
    """An allow-list of networks, plus optionally every public address.

    Build it with :meth:`from_strings`; ``allows()`` is pure and thread-safe.
    """

    networks: tuple[IPNetwork, ...] = ()
    allow_public: bool = False
    refused: tuple[tuple[IPNetwork, int], ...] = ()

    @classmethod
    def from_strings(cls, entries: Iterable[str],
                     refused_endpoints: Iterable[tuple[str, int]] = ()) -> EgressPolicy:
        """Parse ``allowed_networks`` entries and ``refused_endpoints`` (``(address or CIDR
        network, port)`` pairs); raises :class:`FetchConfigError` on a bad one."""
        refused: list[tuple[IPNetwork, int]] = []
        for entry in refused_endpoints:
            try:
                network, port = entry
                pair = (ipaddress.ip_network(str(network).strip("[]"), strict=False), int(port))
            except (TypeError, ValueError) as exc:
                raise FetchConfigError(
                    f"refused_endpoints: {entry!r} is not an (address or network, port) pair"
                ) from exc
            if not 0 < pair[1] < 65536:
                raise FetchConfigError(f"refused_endpoints: port {pair[1]} out of range")
            refused.append(pair)
        networks: list[IPNetwork] = []
        allow_public = False
        for entry in entries:
            text = entry.strip() if isinstance(entry, str) else entry
            if not isinstance(text, str) or not text:
                raise FetchConfigError(f"allowed_networks: empty or non-string entry {entry!r}")
            if text.lower() == PUBLIC:
                allow_public = True
                continue
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError as exc:
                raise FetchConfigError(
                    f"allowed_networks: {text!r} is neither a CIDR network nor 'public': {exc}"
                ) from exc
        return cls(networks=tuple(networks), allow_public=allow_public, refused=tuple(refused))

    def refuses(self, address: str | IPAddress, port: int) -> bool:
        """True when ``address``:``port`` is one of the refused endpoints (the engine's own)."""
        try:
            ip = parse_address(address)
        except ValueError:
            return True
        return any(p == port and net.version == ip.version and ip in net
                   for net, p in self.refused)

    def allows(self, address: str | IPAddress) -> bool:
        """True when the crawler may connect to ``address``; False for a non-address."""
        try:
            ip = parse_address(address)
        except ValueError:
            return False
        raw = ipaddress.ip_address(address.split("%", 1)[0].strip("[]")) \
            if isinstance(address, str) else address
        for net in self.networks:
            if (net.version == ip.version and ip in net) or (
                    net.version == raw.version and raw in net):
                return True
        return self.allow_public and is_public(ip)

    def vet(self, host: str, addresses: Sequence[str], *, url: str = "",
            port: int | None = None) -> list[str]:
        """The allowed ones of ``addresses`` (normalised, in order, no duplicates); with
        ``port``, less those that are refused endpoints on that port.

        Raises :class:`EgressRefused`, naming the host and its addresses, when none is allowed.
        """
        vetted: list[str] = []
        own = False
        for address in addresses:
            if port is not None and self.refuses(address, port):
                own = True
                continue
            if self.allows(address):
                normal = str(parse_address(address))
                if normal not in vetted:
                    vetted.append(normal)
        if not vetted and own:
            raise EgressRefused(
                f"refused by egress policy: host {host} port {port} is one of the engine's own "
                f"services ({', '.join(addresses)})",
                url=url, host=host, addresses=tuple(addresses))
        if not vetted:
            shown = ", ".join(addresses) or "no address"
            raise EgressRefused(
                f"refused by egress policy: host {host} resolves to {shown}, "
                f"outside the allowed networks",
                url=url, host=host, addresses=tuple(addresses))
        return vetted


def system_resolver(host: str, port: int) -> list[str]:
    """Resolve with the operating system (``getaddrinfo``), keeping its preference order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise DnsError(f"cannot resolve host {host}: {exc}") from exc
    addresses: list[str] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise DnsError(f"host {host} has no address")
    return addresses
