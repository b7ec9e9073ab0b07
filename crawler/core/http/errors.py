"""Errors of the fetcher's HTTP layer (``crawler.core.http``).

Two kinds live here. :class:`FetchConfigError` is *raised*: a bad :class:`FetchConfig` fails at
construction, so bad configuration fails at startup. Every :class:`FetchError` subclass is
*returned*: a hostile server or a bad URL never makes :meth:`Fetcher.fetch_many` raise; the
error is the ``error`` field of that URL's :class:`FetchResult`, and the glue decides what to do
(retry a ``retryable`` one with backoff, count it against the host, record it). A file the
configuration names (the CA bundle) is read when the :class:`Fetcher` is built; one that cannot
be read then makes every fetch return :class:`Misconfigured` (kind ``configuration``), so the
crawl reports it instead of the fetcher failing every schedule.

Each class has a stable ``kind`` string (for counters such as ``fetch/error/dns`` and for
messages that cross processes) and a ``retryable`` flag: ``True`` when trying the same URL
later may well succeed (DNS hiccup, timeout, reset), ``False`` when it will fail the same way
(policy refusal, redirect loop, certificate problem, hostile response).
"""

from __future__ import annotations


class FetchConfigError(ValueError):
    """A :class:`~crawler.core.http.config.FetchConfig` value is invalid."""


class FetchError(Exception):
    """Base of the per-URL fetch errors; instances are values in ``FetchResult.error``.

    ``message`` is one human-readable line; ``url`` is the URL being fetched when it happened
    (a redirect hop's target, not necessarily the requested URL).
    """

    kind: str = "fetch"
    retryable: bool = False

    def __init__(self, message: str, *, url: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.url = url

    def __str__(self) -> str:
        return f"{self.message} ({self.url})" if self.url else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, url={self.url!r})"

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and isinstance(other, FetchError)
                and other.message == self.message and other.url == self.url)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.message, self.url))


class InvalidUrl(FetchError):
    """The URL cannot be fetched: malformed, no host, or a scheme other than http/https."""

    kind = "invalid_url"


class DnsError(FetchError):
    """The host name did not resolve."""

    kind = "dns"
    retryable = True


class EgressRefused(FetchError):
    """Every address of the host is outside ``allowed_networks``; nothing was connected to.

    ``host`` is the host name and ``addresses`` the addresses it resolved to.
    """

    kind = "egress_refused"

    def __init__(self, message: str, *, url: str = "", host: str = "",
                 addresses: tuple[str, ...] = ()) -> None:
        super().__init__(message, url=url)
        self.host = host
        self.addresses = addresses


class ConnectTimeout(FetchError):
    """No TCP connection within ``connect_timeout``."""

    kind = "connect_timeout"
    retryable = True


class ConnectionFailed(FetchError):
    """The connection was refused, reset or closed before a complete response."""

    kind = "connection"
    retryable = True


class ReadTimeout(FetchError):
    """The server sent nothing for ``read_timeout`` seconds."""

    kind = "read_timeout"
    retryable = True


class DeadlineExceeded(FetchError):
    """The page took longer than ``page_deadline`` in total (a trickling or stalling server).

    Not retryable: a server that trickled once will usually trickle again, and each try costs a
    worker for the whole deadline.
    """

    kind = "deadline"


class TooManyRedirects(FetchError):
    """More than ``max_redirects`` redirects."""

    kind = "too_many_redirects"


class RedirectLoop(FetchError):
    """A redirect pointed back to a URL already visited in the same chain."""

    kind = "redirect_loop"


class TlsError(FetchError):
    """TLS failed: untrusted certificate, host name mismatch, or a failed handshake."""

    kind = "tls"


class HeadersTooLarge(FetchError):
    """The response headers exceeded ``max_header_count`` or ``max_header_bytes``."""

    kind = "headers_too_large"


class BadResponse(FetchError):
    """The server's answer is not valid HTTP (bad status line, bad chunking, bad encoding)."""

    kind = "bad_response"


class Cancelled(FetchError):
    """The caller gave up on the page before it got a slot of its host (nothing was sent);
    the page may be fetched again later."""

    kind = "cancelled"
    retryable = True


class Misconfigured(FetchError):
    """The fetcher cannot fetch anything because of its own configuration, not the page's:
    the CA bundle it was given cannot be read or holds no certificate (deleted, emptied or
    replaced after start-up). Every page fails the same way until the setting is fixed."""

    kind = "configuration"


class UnexpectedError(FetchError):
    """A failure the fetcher does not classify; logged with its traceback where it happens."""

    kind = "unexpected"


ERROR_KINDS: dict[str, type[FetchError]] = {
    cls.kind: cls
    for cls in (FetchError, InvalidUrl, DnsError, EgressRefused, ConnectTimeout,
                ConnectionFailed, ReadTimeout, DeadlineExceeded, TooManyRedirects,
                RedirectLoop, TlsError, HeadersTooLarge, BadResponse, Cancelled,
                Misconfigured, UnexpectedError)
}
"""``kind`` -> class, to rebuild an error that crossed a process boundary as ``(kind, message)``."""
