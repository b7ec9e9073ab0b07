"""Value types that go into and come out of the fetcher: requests, redirect hops, results.

Layer: ``crawler.core.http``. The scheduler's schedule becomes :class:`FetchRequest` values;
:class:`~crawler.core.http.client.Fetcher` turns each into one :class:`FetchResult`, in the
same order; page processing reads the results (``body``, ``content_type``, ``redirects`` for
location links, ``etag``/``expires`` for recrawl decisions).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

from crawler.core.http.errors import FetchError


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """One URL to download.

    ``etag`` (sent as ``If-None-Match``) and ``last_modified`` (sent as ``If-Modified-Since``)
    make the request conditional: an unchanged page answers 304, which is a result, not an
    error.
    """

    url: str
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True, slots=True)
class RedirectHop:
    """One followed redirect: ``source`` answered ``status`` with a Location of ``target``."""

    source: str
    target: str
    status: int


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What happened to one :class:`FetchRequest`.

    Invariants: ``error is None`` or ``status`` is whatever the last hop answered (0 when no
    response arrived); ``len(body) <= byte_range``; ``truncated`` says the resource is longer
    than ``body`` (cut at the byte range, or a 206 of a longer resource; a 206 whose whole body
    was received is reported as a 200, without its Content-Range); ``headers`` has
    lower-case names (repeated headers joined by ``", "``) and is bounded by the config;
    ``redirects`` lists the hops followed, in order, ending at ``final_url``; ``ip`` is the
    address the last hop connected to (None when no connection was made); ``elapsed`` is wall
    time in seconds, including every hop, from when the page got a slot of its host.
    """

    url: str
    final_url: str
    status: int = 0
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    truncated: bool = False
    content_type: str = ""
    redirects: tuple[RedirectHop, ...] = ()
    ip: str | None = None
    elapsed: float = 0.0
    error: FetchError | None = None

    @property
    def ok(self) -> bool:
        """No error and a 2xx status."""
        return self.error is None and 200 <= self.status < 300

    @property
    def not_modified(self) -> bool:
        """A conditional request answered 304 Not Modified."""
        return self.error is None and self.status == 304

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("last-modified")

    @property
    def expires(self) -> str | None:
        return self.headers.get("expires")

    @property
    def expires_at(self) -> float | None:
        """``Expires`` as a POSIX timestamp; None when absent or unparseable."""
        value = self.expires
        if not value:
            return None
        try:
            return parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError, IndexError):
            return None

    @property
    def location_links(self) -> tuple[tuple[str, str], ...]:
        """``(source, target)`` of each redirect, for the crawl's location links."""
        return tuple((hop.source, hop.target) for hop in self.redirects)
