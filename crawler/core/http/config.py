"""Configuration of the fetcher's HTTP layer.

Layer: ``crawler.core.http``. The glue builds one :class:`FetchConfig` from settings
(``CRAWLER_ALLOWED_NETWORKS``, ``CRAWLER_CA_BUNDLE``...) and the crawl's Page Options, and passes
it to :class:`~crawler.core.http.client.Fetcher`. Nothing here reads settings or the
environment. Defaults are the seed document's and Yioop's (PAGE_RANGE_REQUEST, PAGE_TIMEOUT,
SINGLE_PAGE_TIMEOUT, NUM_MULTI_CURL_PAGES).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from crawler.core.http.egress import EgressPolicy
from crawler.core.http.errors import FetchConfigError

PAGE_RANGE_REQUEST = 1_000_000   # seed: bytes of a page that are downloaded
PAGE_TIMEOUT = 10.0              # Yioop: seconds without data before a read fails
SINGLE_PAGE_TIMEOUT = 30.0       # Yioop: seconds for a whole page, headers and body
CONNECT_TIMEOUT = 5.0
MAX_REDIRECTS = 5
NUM_MULTI_CURL_PAGES = 100       # Yioop: concurrent downloads per batch
PER_HOST_CONCURRENCY = 8
MAX_HEADER_COUNT = 100           # also http.client's own hard limit
MAX_HEADER_BYTES = 64 * 1024
DEFAULT_USER_AGENT = "Mozilla/5.0 (compatible; yioopy-bot/0.1)"


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """Options of the HTTP layer (immutable; validated on construction).

    * ``allowed_networks``: CIDR strings, or ``"public"`` for every globally routable address;
      every connection (each redirect hop too) goes only to an address inside one of them;
    * ``ca_bundle``: PEM file of extra trusted CAs, *added* to the system store; TLS
      verification (chain and host name) is always on and cannot be turned off. The file is
      read when a :class:`~crawler.core.http.client.Fetcher` is built, not here: one that
      cannot be read then fails every fetch with kind ``configuration`` (the engine's
      start-up checks, ``crawler.checks``, refuse a bad ``CRAWLER_CA_BUNDLE`` before that);
    * ``user_agent``: the ``User-Agent`` header;
    * ``byte_range``: bytes of body kept per page (decoded bytes when compressed); a
      ``Range: bytes=0-(byte_range-1)`` header is sent;
    * ``connect_timeout``, ``read_timeout``: seconds for a TCP connect / between data;
    * ``page_deadline``: seconds for a whole page: connects, TLS, headers, body, all hops;
    * ``max_redirects``: redirects followed per page;
    * ``max_header_count`` (1..100), ``max_header_bytes``: bounds on response headers;
    * ``concurrency``: worker threads, so pages in flight at once;
    * ``per_host_concurrency``: pages in flight at once to one host name;
    * ``host_overrides``: host name -> IP address, used instead of DNS (like
      ``curl --resolve``); the egress policy still applies to the address;
    * ``refused_endpoints``: ``(address or CIDR network, port)`` pairs never connected to,
      whatever ``allowed_networks`` says: the engine's own services;
    * ``accept_encoding``: content codings offered; only ``gzip`` and ``deflate`` are decoded.
    """

    allowed_networks: tuple[str, ...] = ("public",)
    ca_bundle: str | None = None
    user_agent: str = DEFAULT_USER_AGENT
    byte_range: int = PAGE_RANGE_REQUEST
    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float = PAGE_TIMEOUT
    page_deadline: float = SINGLE_PAGE_TIMEOUT
    max_redirects: int = MAX_REDIRECTS
    max_header_count: int = MAX_HEADER_COUNT
    max_header_bytes: int = MAX_HEADER_BYTES
    concurrency: int = NUM_MULTI_CURL_PAGES
    per_host_concurrency: int = PER_HOST_CONCURRENCY
    host_overrides: Mapping[str, str] = field(default_factory=dict)
    accept_encoding: tuple[str, ...] = ("gzip", "deflate")
    refused_endpoints: tuple[tuple[str, int], ...] = ()
    egress: EgressPolicy = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.allowed_networks, str):
            raise FetchConfigError("allowed_networks must be a tuple of strings, not a string")
        object.__setattr__(self, "allowed_networks", tuple(self.allowed_networks))
        object.__setattr__(self, "accept_encoding", tuple(
            e.strip().lower() for e in self.accept_encoding if e.strip()))
        object.__setattr__(self, "egress", EgressPolicy.from_strings(
            self.allowed_networks, self.refused_endpoints))
        object.__setattr__(self, "refused_endpoints", tuple(
            (str(network), int(port)) for network, port in self.refused_endpoints))
        if not self.allowed_networks:
            raise FetchConfigError("allowed_networks is empty: the crawler could reach nothing")
        if self.ca_bundle is not None and not str(self.ca_bundle).strip():
            raise FetchConfigError("ca_bundle is empty: give a PEM file's path, or None")
        if not self.user_agent or any(c in self.user_agent for c in "\r\n"):
            raise FetchConfigError("user_agent must be a non-empty single line")
        for name in ("byte_range", "max_header_bytes", "concurrency", "per_host_concurrency"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise FetchConfigError(f"{name} must be a positive integer, got {value!r}")
        for name in ("connect_timeout", "read_timeout", "page_deadline"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
                raise FetchConfigError(f"{name} must be a positive number of seconds, "
                                       f"got {value!r}")
        if not isinstance(self.max_redirects, int) or self.max_redirects < 0:
            raise FetchConfigError(f"max_redirects must be >= 0, got {self.max_redirects!r}")
        if not isinstance(self.max_header_count, int) or not 1 <= self.max_header_count <= 100:
            raise FetchConfigError("max_header_count must be in 1..100 (http.client's own "
                                   f"limit is 100), got {self.max_header_count!r}")
        unknown = set(self.accept_encoding) - {"gzip", "deflate", "identity"}
        if unknown:
            raise FetchConfigError(f"accept_encoding: cannot decode {sorted(unknown)}")
        overrides: dict[str, str] = {}
        for host, address in dict(self.host_overrides).items():
            try:
                ipaddress.ip_address(address)
            except ValueError as exc:
                raise FetchConfigError(
                    f"host_overrides: {host!r} -> {address!r} is not an IP address") from exc
            overrides[host.lower().rstrip(".")] = address
        object.__setattr__(self, "host_overrides", MappingProxyType(overrides))
