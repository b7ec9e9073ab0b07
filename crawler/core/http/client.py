"""The fetcher's HTTP layer: download a batch of URLs concurrently, safely and within bounds.

Layer: ``crawler.core.http``. Neighbours: ``config.py`` (:class:`FetchConfig`), ``egress.py``
(which addresses may be reached), ``transport.py`` (vetted, deadlined connections in keep-alive
pools), ``body.py`` (byte-limited decoding), ``result.py`` (the value types). Callers: the
fetcher task in the glue (a schedule in batches of ``concurrency``), and robots.txt fetches,
which take the same path.

Call order: ``Fetcher(config)``, then ``fetch_many(requests)`` (or ``submit(request)`` for one
future per page) as often as needed (connections are reused across calls), then ``close()`` (or use it as a context manager). ``fetch_many``
never raises for a bad URL or a hostile server: each URL gets one :class:`FetchResult`, in
request order, whose ``error`` says what went wrong.

Per page: at most ``per_host_concurrency`` pages to one host name at once (a hop waits for a
slot of its own host); the page deadline starts when the first hop gets its slot and covers
every hop, connect, TLS handshake, headers and body. Each hop sends ``Range`` (a 416 is retried
once without it), ``Accept-Encoding``, and for conditional requests ``If-None-Match`` /
``If-Modified-Since``. Redirects (301, 302, 303, 307, 308) are followed by hand, each hop going
through the egress check again; a hop back to a URL already in the chain is a redirect loop.
"""

from __future__ import annotations

import http.client
import logging
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import urllib3
from urllib3 import exceptions as u3

from crawler.core.http.body import BodyDecodeError, read_body
from crawler.core.http.config import FetchConfig
from crawler.core.http.egress import Resolver, system_resolver
from crawler.core.http.errors import (
    BadResponse,
    Cancelled,
    ConnectionFailed,
    ConnectTimeout,
    DeadlineExceeded,
    FetchError,
    HeadersTooLarge,
    InvalidUrl,
    Misconfigured,
    ReadTimeout,
    RedirectLoop,
    TlsError,
    TooManyRedirects,
    UnexpectedError,
)
from crawler.core.http.result import FetchRequest, FetchResult, RedirectHop
from crawler.core.http.transport import PageClock, VettedPoolManager
from indexer.core.urls import host_of

log = logging.getLogger(__name__)

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
DRAIN_LIMIT = 64 * 1024  # a redirect or 416 body this small is read so the connection is reused
CANCEL_POLL = 0.05  # seconds between checks of a cancel event while waiting for a host slot


def normalize_url(url: str) -> str:
    """``url`` without its fragment, with scheme and host lower-cased (for loop detection)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/",
                       parts.query, ""))


def check_url(url: str) -> str:
    """``url`` (fragment dropped) when it is a fetchable http(s) URL; raises InvalidUrl."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise InvalidUrl(f"malformed URL: {exc}", url=url) from exc
    if parts.scheme.lower() not in ("http", "https"):
        raise InvalidUrl(f"unsupported scheme {parts.scheme!r}", url=url)
    if not parts.hostname:
        raise InvalidUrl("URL has no host", url=url)
    if port == 0:
        raise InvalidUrl("port 0", url=url)
    if any(c in url for c in "\r\n\t\0 "):
        raise InvalidUrl("URL contains whitespace or control characters", url=url)
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path or "/", parts.query, ""))


def _host_key(url: str) -> str:
    return host_of(url)


def _chain(exc: BaseException) -> Iterable[BaseException]:
    """``exc`` and every exception it wraps (urllib3 nests them in args and causes)."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for nxt in (current.__cause__, current.__context__,
                    getattr(current, "reason", None), *current.args):
            if isinstance(nxt, BaseException):
                stack.append(nxt)


@dataclass(slots=True)
class _Hop:
    """The mutable state of one page while its hops are being fetched."""

    url: str
    redirects: list[RedirectHop] = field(default_factory=list)
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    ip: str | None = None
    started: float = 0.0  # monotonic: when the page got its first slot (or was asked for)


class Fetcher:
    """Downloads batches of URLs; holds the keep-alive pools and the worker threads.

    Thread-safe: ``fetch_many`` may be called from several threads (they share the workers and
    the per-host limits). ``resolver`` replaces DNS (tests; ``host_overrides`` win over it).
    """

    def __init__(self, config: FetchConfig, *, resolver: Resolver | None = None) -> None:
        self.config = config
        self._clock = PageClock()
        # DNS lookups run here so that each one can be abandoned at its time limit; a lookup
        # that hangs holds a DNS thread, never a fetch worker.
        self._dns = ThreadPoolExecutor(max_workers=min(16, config.concurrency),
                                       thread_name_prefix="fetch-dns")
        # a CA bundle that cannot be read (deleted or spoilt after start-up) leaves a Fetcher
        # whose every fetch fails with kind "configuration", so the crawl reports it instead of
        # the fetcher process failing each schedule it is given
        self._misconfigured: str | None = None
        self._pools: VettedPoolManager | None = None
        try:
            self._pools = VettedPoolManager(config, resolver or system_resolver, self._clock,
                                            dns_executor=self._dns)
        except OSError as exc:  # ssl.SSLError included
            self._misconfigured = (f"the CA bundle {config.ca_bundle!r} cannot be loaded: "
                                   f"{exc}")
            log.error("fetcher cannot fetch: %s", self._misconfigured)
        self._executor = ThreadPoolExecutor(max_workers=config.concurrency,
                                            thread_name_prefix="fetch")
        self._host_slots: dict[str, threading.BoundedSemaphore] = {}
        self._slots_lock = threading.Lock()
        self._closed = False

    # -- public API ---------------------------------------------------------------------------

    @property
    def misconfigured(self) -> str | None:
        """Why this Fetcher cannot fetch anything (its CA bundle could not be loaded), or
        None: every fetch of a misconfigured Fetcher fails with kind ``configuration``."""
        return self._misconfigured

    def fetch_many(self, requests: Sequence[FetchRequest | str]) -> list[FetchResult]:
        """One result per request, in order; concurrent, bounded per host; never raises for a
        URL or a server (only for a closed Fetcher)."""
        if self._closed:
            raise RuntimeError("Fetcher is closed")
        futures = [self.submit(r) for r in requests]
        return [f.result() for f in futures]

    def submit(self, request: FetchRequest | str, cancel: threading.Event | None = None,
               on_start: Callable[[], None] | None = None,
               then: Callable[[FetchResult], Any] | None = None) -> Future[Any]:
        """Start fetching one page in a worker; the future never raises for a URL or a
        server (its result carries the error). Lets a caller stop waiting for a download that
        stalls (it still ends by the page deadline). Setting ``cancel`` while the page waits
        for a slot of its host ends it at once with a :class:`Cancelled` error; ``on_start``
        is called when the page got its slot (its deadline starts then). ``then``, when
        given, is applied to the result in the worker, and the future holds what it returns
        (it must not raise)."""
        if self._closed:
            raise RuntimeError("Fetcher is closed")
        item = request if isinstance(request, FetchRequest) else FetchRequest(request)
        if then is None:
            return self._executor.submit(self.fetch, item, cancel, on_start)
        return self._executor.submit(lambda: then(self.fetch(item, cancel, on_start)))

    def fetch(self, request: FetchRequest | str, cancel: threading.Event | None = None,
              on_start: Callable[[], None] | None = None) -> FetchResult:
        """Fetch one page in the calling thread (``fetch_many`` runs this in its workers);
        ``cancel``, ``on_start``: see :meth:`submit`."""
        if isinstance(request, str):
            request = FetchRequest(request)
        hop = _Hop(url=request.url, started=time.monotonic())
        try:
            result = self._fetch_page(request, hop, cancel, on_start)
        except FetchError as exc:
            result = self._failure(request, hop, exc)
        except Exception as exc:  # the contract: errors are values, so nothing escapes
            log.exception("unexpected fetch failure url=%s", hop.url)
            result = self._failure(request, hop, UnexpectedError(
                f"{type(exc).__name__}: {exc}", url=hop.url))
        finally:
            self._clock.stop()
        if result.error is not None:
            log.info("fetch error url=%s kind=%s: %s", request.url, result.error.kind,
                     result.error.message)
        return result

    def close(self) -> None:
        """Stop the workers and close every pooled connection. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._dns.shutdown(wait=False, cancel_futures=True)
        if self._pools is not None:
            self._pools.clear()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- one page -----------------------------------------------------------------------------

    def _slot(self, host: str) -> threading.BoundedSemaphore:
        with self._slots_lock:
            slot = self._host_slots.get(host)
            if slot is None:
                slot = threading.BoundedSemaphore(self.config.per_host_concurrency)
                self._host_slots[host] = slot
            return slot

    def _fetch_page(self, request: FetchRequest, hop: _Hop,
                    cancel: threading.Event | None = None,
                    on_start: Callable[[], None] | None = None) -> FetchResult:
        config = self.config
        url = check_url(request.url)
        hop.url = url
        if self._misconfigured is not None:
            raise Misconfigured(self._misconfigured, url=url)
        visited = {normalize_url(url)}
        clock_started = False
        while True:
            slot = self._slot(_host_key(url))
            if clock_started:
                remaining = self._clock.remaining() or 0.0
                if remaining <= 0 or not slot.acquire(timeout=remaining):
                    raise DeadlineExceeded(
                        f"page deadline of {config.page_deadline:g}s exceeded", url=url)
            else:
                if cancel is None:
                    slot.acquire()
                else:
                    while not slot.acquire(timeout=CANCEL_POLL):
                        if cancel.is_set():
                            raise Cancelled("given up before a slot of the host was free",
                                            url=url)
                self._clock.start(config.page_deadline)
                clock_started = True
                hop.started = time.monotonic()  # a page's time excludes waiting for a slot
                if on_start is not None:
                    on_start()
            try:
                response = self._request(url, request, hop)
                try:
                    location = response.headers.get("location")
                    if hop.status in REDIRECT_STATUSES and location:
                        self._discard(response)
                    else:
                        return self._finish(request, hop, response)
                finally:
                    response.release_conn()
            finally:
                slot.release()
            target = urljoin(url, location.strip())
            hop.redirects.append(RedirectHop(source=url, target=target, status=hop.status))
            if len(hop.redirects) > config.max_redirects:
                raise TooManyRedirects(
                    f"more than {config.max_redirects} redirects", url=target)
            target = check_url(target)
            key = normalize_url(target)
            if key in visited:
                raise RedirectLoop(f"redirect loop: {url} -> {target}", url=target)
            visited.add(key)
            url = hop.url = target

    def _headers(self, request: FetchRequest, with_range: bool) -> dict[str, str]:
        config = self.config
        headers = {
            "User-Agent": config.user_agent,
            "Accept": "*/*",
            "Accept-Encoding": ", ".join(config.accept_encoding) or "identity",
        }
        if with_range:
            headers["Range"] = f"bytes=0-{config.byte_range - 1}"
        if request.etag:
            headers["If-None-Match"] = request.etag
        if request.last_modified:
            headers["If-Modified-Since"] = request.last_modified
        return headers

    def _request(self, url: str, request: FetchRequest, hop: _Hop) -> urllib3.BaseHTTPResponse:
        """One GET on one hop, with a single retry without Range after a 416."""
        response = self._send(url, self._headers(request, with_range=True), hop)
        if hop.status == 416:
            self._discard(response)
            response.release_conn()
            response = self._send(url, self._headers(request, with_range=False), hop)
        return response

    def _send(self, url: str, headers: dict[str, str], hop: _Hop) -> urllib3.BaseHTTPResponse:
        config = self.config
        remaining = self._clock.remaining()
        if remaining is not None and remaining <= 0:
            raise DeadlineExceeded(f"page deadline of {config.page_deadline:g}s exceeded",
                                   url=url)
        try:
            response = self._pools.urlopen(
                "GET", url, headers=headers, redirect=False, retries=False,
                preload_content=False, decode_content=False,
                timeout=urllib3.Timeout(connect=config.connect_timeout,
                                        read=config.read_timeout))
        except FetchError as exc:
            exc.url = exc.url or url
            raise
        except Exception as exc:
            raise self._classify(exc, url) from exc
        connection = response.connection
        hop.ip = getattr(connection, "vetted_address", None) or hop.ip
        hop.status = response.status
        try:
            hop.headers = self._bounded_headers(response, url)
        except HeadersTooLarge:
            response.close()
            response.release_conn()
            raise
        return response

    def _bounded_headers(self, response: urllib3.BaseHTTPResponse, url: str) -> dict[str, str]:
        config = self.config
        items = list(response.headers.items())
        size = sum(len(k) + len(v) + 4 for k, v in items)
        if len(items) > config.max_header_count or size > config.max_header_bytes:
            raise HeadersTooLarge(
                f"response headers too large: {len(items)} headers, {size} bytes "
                f"(limits {config.max_header_count}, {config.max_header_bytes})", url=url)
        headers: dict[str, str] = {}
        for name, value in items:
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return headers

    def _discard(self, response: urllib3.BaseHTTPResponse) -> None:
        """Drop a body we do not want; read it only when small, so the connection is reused."""
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) <= DRAIN_LIMIT:
            try:
                response.read(decode_content=False)
                return
            except Exception:  # a broken redirect body is not worth an error; just close
                log.debug("could not drain a discarded body", exc_info=True)
        response.close()

    def _finish(self, request: FetchRequest, hop: _Hop, response: urllib3.BaseHTTPResponse
                ) -> FetchResult:
        config = self.config
        coding = hop.headers.get("content-encoding", "").strip().lower()
        try:
            read = read_body(lambda n: response.read1(n, decode_content=False), coding=coding,
                             limit=config.byte_range,
                             raw_limit=2 * config.byte_range + 64 * 1024)
        except BodyDecodeError as exc:
            response.close()
            raise BadResponse(str(exc), url=hop.url) from exc
        except FetchError:
            response.close()
            raise
        except Exception as exc:
            response.close()
            raise self._classify(exc, hop.url) from exc
        if not read.complete:
            response.close()  # unread bytes are left on the socket: do not reuse it
        truncated = read.truncated or _partial(hop.status, hop.headers, len(read.body))
        status, headers = _whole(hop.status, hop.headers, truncated)
        return FetchResult(
            url=request.url, final_url=hop.url, status=status, headers=headers,
            body=read.body, truncated=truncated,
            content_type=_media_type(hop.headers.get("content-type", "")),
            redirects=tuple(hop.redirects), ip=hop.ip,
            elapsed=time.monotonic() - hop.started, error=None)

    def _failure(self, request: FetchRequest, hop: _Hop, error: FetchError) -> FetchResult:
        return FetchResult(
            url=request.url, final_url=hop.url, status=hop.status, headers=hop.headers,
            body=b"", truncated=False,
            content_type=_media_type(hop.headers.get("content-type", "")),
            redirects=tuple(hop.redirects), ip=hop.ip,
            elapsed=time.monotonic() - hop.started, error=error)

    def _classify(self, exc: BaseException, url: str) -> FetchError:
        """Map a urllib3/http.client/ssl/socket failure to a FetchError."""
        chain = list(_chain(exc))
        for item in chain:
            if isinstance(item, FetchError):
                item.url = item.url or url
                return item
        deadline_hit = self._clock.expired or (self._clock.remaining() or 1.0) <= 0
        for item in chain:
            if isinstance(item, http.client.LineTooLong) or (
                    isinstance(item, http.client.HTTPException)
                    and "more than" in str(item) and "headers" in str(item)):
                return HeadersTooLarge(f"response headers too large: {item}", url=url)
        for item in chain:
            if isinstance(item, ssl.SSLCertVerificationError | ssl.CertificateError):
                return TlsError(f"TLS certificate rejected: {item}", url=url)
        for item in chain:
            if isinstance(item, u3.ConnectTimeoutError):
                if deadline_hit:
                    break
                return ConnectTimeout(f"connect timed out: {item}", url=url)
        for item in chain:
            if isinstance(item, TimeoutError | u3.ReadTimeoutError | u3.TimeoutError):
                if deadline_hit:
                    return DeadlineExceeded(
                        f"page deadline of {self.config.page_deadline:g}s exceeded", url=url)
                return ReadTimeout(
                    f"no data for {self.config.read_timeout:g}s", url=url)
        for item in chain:
            if isinstance(item, ssl.SSLError | u3.SSLError):
                return TlsError(f"TLS failed: {item}", url=url)
        for item in chain:
            if isinstance(item, u3.LocationParseError | u3.LocationValueError):
                return InvalidUrl(f"malformed URL: {item}", url=url)
        for item in chain:
            if isinstance(item, http.client.IncompleteRead | u3.IncompleteRead):
                return ConnectionFailed(f"connection closed mid-body: {item}", url=url)
        for item in chain:
            if isinstance(item, ConnectionError | u3.NewConnectionError):
                return ConnectionFailed(f"connection failed: {item}", url=url)
        for item in chain:
            if isinstance(item, http.client.HTTPException | u3.DecodeError
                          | u3.InvalidChunkLength | u3.ProtocolError):
                return BadResponse(f"invalid HTTP response: {item}", url=url)
        for item in chain:
            if isinstance(item, OSError | u3.HTTPError):
                return ConnectionFailed(f"connection failed: {item}", url=url)
        log.warning("unclassified fetch failure url=%s: %r", url, exc)
        return UnexpectedError(f"{type(exc).__name__}: {exc}", url=url)


def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def _partial(status: int, headers: dict[str, str], kept: int) -> bool:
    """A 206 whose Content-Range says the resource is longer than what was kept."""
    if status != 206:
        return False
    total = headers.get("content-range", "").rpartition("/")[2].strip()
    return not total.isdigit() or int(total) > kept


def _whole(status: int, headers: dict[str, str], truncated: bool
           ) -> tuple[int, dict[str, str]]:
    """(status, headers) to report: a 206 whose whole body was received is the resource
    itself, a 200 without its Content-Range (the Range header is only the fetcher's byte cap:
    a page shown or archived as "206 Partial Content" was whole). Anything else unchanged."""
    if status != 206 or truncated:
        return status, headers
    return 200, {k: v for k, v in headers.items() if k != "content-range"}


def fetch_batch(requests: Sequence[FetchRequest | str], config: FetchConfig, *,
                resolver: Resolver | None = None) -> list[FetchResult]:
    """Fetch one batch with a throw-away :class:`Fetcher` (connections reused within it only)."""
    with Fetcher(config, resolver=resolver) as fetcher:
        return fetcher.fetch_many(requests)
