"""The connection layer under :class:`~crawler.core.http.client.Fetcher`: vetted, deadlined
sockets in urllib3 keep-alive pools.

Layer: ``crawler.core.http``; used only by ``client.py``. Pieces, bottom up:

* :class:`PageClock` - a per-thread page deadline, owned by one Fetcher. A worker sets it
  before a page and clears it after.
* :class:`DeadlineSocket` / :class:`DeadlineSSLSocket` - before every receive, the socket
  timeout becomes ``min(read timeout, time left until the page deadline)``; past the deadline
  the receive fails at once. That bounds what per-operation timeouts cannot: a server that
  trickles one byte a second, or sends headers forever, still ends at the deadline.
* :class:`VettedHTTPConnection` / :class:`VettedHTTPSConnection` - on connect, resolve the host
  (``host_overrides`` first, then the resolver), keep only addresses the
  :class:`~crawler.core.http.egress.EgressPolicy` allows, and connect to one of *those*
  addresses. TLS still uses the URL's host name for SNI and for certificate host name checking.
* :class:`VettedPoolManager` - urllib3's PoolManager whose pools build those connections;
  one pool per (scheme, host, port), keeping up to ``per_host_concurrency`` idle connections.

Errors raised here are :class:`~crawler.core.http.errors.FetchError` subclasses (not
``OSError``), so urllib3 passes them through unwrapped.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
import threading
import time
from concurrent.futures import Executor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from urllib3 import HTTPConnectionPool, HTTPSConnectionPool, PoolManager
from urllib3.connection import HTTPConnection, HTTPSConnection

from crawler.core.http.config import FetchConfig
from crawler.core.http.egress import EgressPolicy, Resolver
from crawler.core.http.errors import ConnectionFailed, ConnectTimeout, DeadlineExceeded, DnsError

log = logging.getLogger(__name__)


class PageClock(threading.local):
    """The deadline of the page the current thread is fetching (monotonic seconds or None).

    ``expired`` is set when a socket operation was refused or cut short by the deadline, so the
    fetcher can tell a deadline from an ordinary read timeout.
    """

    deadline: float | None = None
    expired: bool = False

    def start(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.expired = False

    def stop(self) -> None:
        self.deadline = None

    def remaining(self) -> float | None:
        if self.deadline is None:
            return None
        return self.deadline - time.monotonic()


class _DeadlineMixin:
    """Per-receive timeout = min(the timeout urllib3 asked for, time left on the page clock)."""

    _clock: PageClock | None = None
    _base_timeout: float | None = None

    def settimeout(self, value: float | None) -> None:
        self._base_timeout = value
        super().settimeout(value)  # type: ignore[misc]

    def _apply_deadline(self) -> None:
        clock = self._clock
        if clock is None:
            return
        remaining = clock.remaining()
        if remaining is None:
            super().settimeout(self._base_timeout)  # type: ignore[misc]
            return
        if remaining <= 0:
            clock.expired = True
            raise TimeoutError("page deadline exceeded")
        base = self._base_timeout
        if base is None or remaining < base:
            clock.expired = True  # if this receive times out, the deadline is the cause
            super().settimeout(remaining)  # type: ignore[misc]
        else:
            clock.expired = False
            super().settimeout(base)  # type: ignore[misc]

    def recv_into(self, buffer: Any, nbytes: Any = None, flags: int = 0) -> int:
        self._apply_deadline()
        if nbytes is None:
            return super().recv_into(buffer, flags=flags)  # type: ignore[misc]
        return super().recv_into(buffer, nbytes, flags)  # type: ignore[misc]

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self._apply_deadline()
        return super().recv(bufsize, flags)  # type: ignore[misc]


class DeadlineSocket(_DeadlineMixin, socket.socket):
    """A TCP socket bounded by a :class:`PageClock`."""


class DeadlineSSLSocket(_DeadlineMixin, ssl.SSLSocket):
    """A TLS socket bounded by a :class:`PageClock` (installed as the context's socket class)."""

    def recv_into(self, buffer: Any, nbytes: Any = None, flags: int = 0) -> int:
        self._apply_deadline()
        return ssl.SSLSocket.recv_into(self, buffer, nbytes, flags)

    def recv(self, bufsize: int = 1024, flags: int = 0) -> bytes:
        self._apply_deadline()
        return ssl.SSLSocket.recv(self, bufsize, flags)


def make_ssl_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The system trust store plus ``ca_bundle``; chain and host name verification always on."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if ca_bundle:
        context.load_verify_locations(cafile=ca_bundle)
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    context.sslsocket_class = DeadlineSSLSocket
    return context


@dataclass(frozen=True, slots=True)
class ConnectContext:
    """What a connection needs to open a vetted socket; one per Fetcher."""

    policy: EgressPolicy
    resolver: Resolver
    overrides: Any  # Mapping[str, str]: host -> address
    connect_timeout: float
    clock: PageClock
    dns_executor: Executor | None = None

    def addresses(self, host: str, port: int) -> list[str]:
        """Overrides first, then IP literals as they are, then the resolver. With a
        ``dns_executor`` the lookup is bounded by ``min(connect_timeout, time left)``: the
        system resolver has no timeout of its own that we control."""
        name = host.strip("[]").lower().rstrip(".")
        override = self.overrides.get(name)
        if override is not None:
            return [override]
        try:
            ipaddress.ip_address(name.split("%", 1)[0])
            return [name]
        except ValueError:
            pass
        if self.dns_executor is None:
            return list(self.resolver(name, port))
        remaining = self.clock.remaining()
        timeout = self.connect_timeout if remaining is None \
            else max(0.0, min(self.connect_timeout, remaining))
        future = self.dns_executor.submit(self.resolver, name, port)
        try:
            return list(future.result(timeout=timeout))
        except FutureTimeout:
            future.cancel()
            raise DnsError(f"resolving host {name} took more than {timeout:.1f}s") from None


class _VettedMixin:
    """Replaces urllib3's ``_new_conn``: resolve, vet, connect to the vetted address."""

    host: str
    port: int
    vetted_address: str | None = None

    def __init__(self, *args: Any, fetch_context: ConnectContext, **kwargs: Any) -> None:
        self._fetch_context = fetch_context
        super().__init__(*args, **kwargs)

    def _new_conn(self) -> socket.socket:
        ctx = self._fetch_context
        host = self.host
        addresses = ctx.addresses(host, self.port)
        vetted = ctx.policy.vet(host, addresses, port=self.port)
        failure: Exception | None = None
        for address in vetted:
            remaining = ctx.clock.remaining()
            if remaining is not None and remaining <= 0:
                ctx.clock.expired = True
                raise DeadlineExceeded(f"page deadline exceeded before connecting to {host}")
            timeout = ctx.connect_timeout if remaining is None \
                else min(ctx.connect_timeout, remaining)
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sock = DeadlineSocket(family, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(timeout)
                sock.connect((address, self.port))
            except TimeoutError:
                sock.close()
                if remaining is not None and remaining <= ctx.connect_timeout:
                    ctx.clock.expired = True
                    failure = DeadlineExceeded(
                        f"page deadline exceeded connecting to {host} ({address})")
                else:
                    failure = ConnectTimeout(
                        f"connect to {host} ({address}) port {self.port} timed out "
                        f"after {timeout:.1f}s")
                continue
            except OSError as exc:
                sock.close()
                failure = ConnectionFailed(
                    f"cannot connect to {host} ({address}) port {self.port}: {exc}")
                continue
            sock._clock = ctx.clock
            self.vetted_address = address
            log.debug("connected host=%s address=%s port=%s", host, address, self.port)
            return sock
        assert failure is not None
        raise failure


class VettedHTTPConnection(_VettedMixin, HTTPConnection):
    """A plain HTTP connection to a vetted address."""


class VettedHTTPSConnection(_VettedMixin, HTTPSConnection):
    """A TLS connection to a vetted address; verification cannot be switched off."""

    def connect(self) -> None:
        self.cert_reqs = "CERT_REQUIRED"
        self.assert_hostname = None
        self.assert_fingerprint = None
        super().connect()
        sock = self.sock
        if isinstance(sock, DeadlineSSLSocket):
            sock._clock = self._fetch_context.clock


class VettedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = VettedHTTPConnection


class VettedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = VettedHTTPSConnection


class VettedPoolManager(PoolManager):
    """Keep-alive pools per (scheme, host, port) whose connections are vetted and deadlined."""

    def __init__(self, config: FetchConfig, resolver: Resolver, clock: PageClock,
                 dns_executor: Executor | None = None) -> None:
        super().__init__(
            num_pools=max(256, 2 * config.concurrency),
            maxsize=config.per_host_concurrency,
            block=False,
            ssl_context=make_ssl_context(config.ca_bundle),
            cert_reqs="CERT_REQUIRED",
            retries=False,
        )
        self.pool_classes_by_scheme = {
            "http": VettedHTTPConnectionPool, "https": VettedHTTPSConnectionPool}
        self._fetch_context = ConnectContext(
            policy=config.egress, resolver=resolver, overrides=config.host_overrides,
            connect_timeout=config.connect_timeout, clock=clock, dns_executor=dns_executor)

    def _new_pool(self, scheme: str, host: str, port: int,
                  request_context: dict[str, Any] | None = None) -> HTTPConnectionPool:
        pool = super()._new_pool(scheme, host, port, request_context)
        pool.conn_kw["fetch_context"] = self._fetch_context
        return pool
