"""The fetcher's HTTP layer: safe, bounded, concurrent downloads for the crawl.

Layer: ``crawler.core.http`` (pure Python: no Django, no Celery, no settings). The glue builds a
:class:`FetchConfig` and a :class:`Fetcher`, hands it batches of :class:`FetchRequest` (pages and
robots.txt alike), and gets one :class:`FetchResult` per request back; page processing
(``crawler.core.processing.page`` and friends) consumes the results. The schedule worker
(``crawler.core.fetcher``) is this layer's user, as Scrapy's engine is its downloader's. Modules:

* ``config.py`` - :class:`FetchConfig` (frozen, validated);
* ``egress.py`` - :class:`EgressPolicy`, :func:`is_public`: which addresses may be reached;
* ``transport.py`` - vetted, deadline-bounded connections in per-host keep-alive pools;
* ``body.py`` - reading a body within the byte range, decoding gzip/deflate incrementally;
* ``client.py`` - :class:`Fetcher` (``fetch_many``, ``fetch``, ``close``), :func:`fetch_batch`;
* ``resolver.py`` - :class:`CachingResolver`: a fetcher process's DNS cache;
* ``round.py`` - :func:`~.round.download_round`: one round of downloads that does not wait
  for blocked hosts (``hostwatch.py``: which hosts stall);
* ``paced.py`` - :class:`~.paced.PacedFetch`, :func:`hop_fetcher_for`: crawl-delayed urls,
  every redirect hop spaced by the delay;
* ``result.py`` - :class:`FetchRequest`, :class:`FetchResult`, :class:`RedirectHop`;
* ``errors.py`` - :class:`FetchConfigError` (raised) and :class:`FetchError` subclasses
  (returned as ``FetchResult.error``).

Example::

    config = FetchConfig(allowed_networks=("public",), ca_bundle=None)
    with Fetcher(config) as fetcher:
        for result in fetcher.fetch_many([FetchRequest("https://example.org/")]):
            if result.error:
                ...  # result.error.kind, result.error.retryable
"""

from __future__ import annotations

from crawler.core.http.client import Fetcher, fetch_batch
from crawler.core.http.config import FetchConfig
from crawler.core.http.egress import PUBLIC, EgressPolicy, Resolver, is_public, system_resolver
from crawler.core.http.errors import (
    ERROR_KINDS,
    BadResponse,
    Cancelled,
    ConnectionFailed,
    ConnectTimeout,
    DeadlineExceeded,
    DnsError,
    EgressRefused,
    FetchConfigError,
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
from crawler.core.http.paced import hop_fetcher_for
from crawler.core.http.resolver import CachingResolver
from crawler.core.http.result import FetchRequest, FetchResult, RedirectHop

__all__ = [
    "ERROR_KINDS", "PUBLIC", "BadResponse", "CachingResolver", "Cancelled", "ConnectTimeout",
    "ConnectionFailed", "DeadlineExceeded", "DnsError", "EgressPolicy", "EgressRefused",
    "FetchConfig", "FetchConfigError", "FetchError", "FetchRequest", "FetchResult", "Fetcher",
    "HeadersTooLarge", "InvalidUrl", "Misconfigured", "ReadTimeout", "RedirectHop", "RedirectLoop", "Resolver",
    "TlsError", "TooManyRedirects", "UnexpectedError", "fetch_batch", "hop_fetcher_for",
    "is_public", "system_resolver",
]
