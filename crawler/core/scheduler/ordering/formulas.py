"""The seed's host-budgeting formulas and the url facts the queue needs, as pure functions.

Layer: ``crawler.core.scheduler``. From the seed *Yioop Search Engine Ranking Mechanisms*
("Queue Servers and their Effect on Search Ranking"):

* company level domain (CLD): ``something.2chars.2chars`` for hosts of that shape (or longer:
  ``blah.something.2chars.2chars``), else ``2ndlevel.tld``
  (:func:`indexer.core.urls.company_level_domain`, shared with search's url bonuses).
* the ``i``-th link of a page adds ``max(1, 1 + log(1 + i, 5))`` to WEIGHTED_SEEN_URLS. The
  seed prints ``min``, but read literally that is exactly 1 for every ``i >= 0``
  (``1 + log5(1+i) >= 1``), which would make WEIGHTED_SEEN_URLS a copy of SEEN_URLS and
  contradicts the seed's next sentence ("a less important link will tend to add more to
  WEIGHTED_SEEN_URLS"). We implement the stated intent: later (less important) links add more.
* a link from a page in another CLD, of weight ``w`` scheduled in tier ``t``, adds
  ``1 / (1.1 + t + log(1 + w, 5))`` to WEIGHTED_INCOMING_URLS;
* tier ``= floor(log10(max(1, WEIGHTED_SEEN_URLS - WEIGHTED_INCOMING_URLS)))``, plus
  SITEMAP_TIER_PENALTY (4) for sitemaps and 1 for non-HTML pages.
"""

from __future__ import annotations

import math

from crawler.core.scheduler.config import NON_HTML_TIER_PENALTY, SITEMAP_TIER_PENALTY
from crawler.core.scheduler.errors import InvalidUrlError
from indexer.core.ids import hash8

_LOG5 = math.log(5.0)


def seen_increment(link_index: int) -> float:
    """What the ``i``-th link adds to WEIGHTED_SEEN_URLS: ``max(1, 1 + log(1 + i, 5))``
    (see the module docstring for why not the seed's literal ``min``)."""
    i = max(0, link_index)
    return max(1.0, 1.0 + math.log(1.0 + i) / _LOG5)


def incoming_increment(source_weight: float, source_tier: int) -> float:
    """What a link from another CLD adds to WEIGHTED_INCOMING_URLS:
    ``1 / (1.1 + t + log(1 + w, 5))``."""
    w = max(0.0, float(source_weight))
    t = max(0, int(source_tier))
    return 1.0 / (1.1 + t + math.log(1.0 + w) / _LOG5)


def budget_tier(weighted_seen: float, weighted_incoming: float, *, is_sitemap: bool = False,
                is_html: bool = True) -> int:
    """The host-budgeting tier of a url after its CLD's counters were updated."""
    tier = math.floor(math.log10(max(1.0, weighted_seen - weighted_incoming)))
    if is_sitemap:
        tier += SITEMAP_TIER_PENALTY
    if not is_html:
        tier += NON_HTML_TIER_PENALTY
    return int(tier)


def split_origin(url: str) -> tuple[str, str]:
    """``(origin, host)`` of an absolute http(s) url: ``origin`` is ``scheme://netloc`` (the
    politeness and robots key: two ports of one host are two sites), ``host`` the lower-case
    host name without port. Raises :class:`InvalidUrlError`.

    A fast path for the queue's hot loop: it expects canonical urls (see
    :func:`crawler.core.urls.canonicalize`) and only checks what the url files need.
    """
    if url.startswith("http://"):
        start = 7
    elif url.startswith("https://"):
        start = 8
    else:
        raise InvalidUrlError(f"not an absolute http(s) url: {url[:200]!r}")
    end = len(url)
    for sep in "/?#":
        pos = url.find(sep, start)
        if 0 <= pos < end:
            end = pos
    netloc = url[start:end].lower()
    if "@" in netloc:
        netloc = netloc.rpartition("@")[2]
    if netloc.startswith("["):
        host = netloc[: netloc.find("]") + 1]
    else:
        host = netloc.partition(":")[0]
    if not host:
        raise InvalidUrlError(f"url has no host: {url[:200]!r}")
    return url[:start] + netloc, host


def check_storable(url: str) -> None:
    """Refuse urls that would break the one-record-per-line, tab-separated url files."""
    if not url or any(c in url for c in "\t\n\r\x00"):
        raise InvalidUrlError(f"url contains control characters or is empty: {url[:200]!r}")


def host_hash(origin: str) -> str:
    """The folder name of a host under WaitRobotUrl/ and CrawlDelayedHosts/: the hex of the
    seed's 8-byte hash of the origin (:func:`indexer.core.ids.hash8`)."""
    return hash8(origin).hex()


def cld_hash(cld: str) -> int:
    """The CLD table key: the seed's 8-byte hash of the CLD as an unsigned integer."""
    return int.from_bytes(hash8(cld), "big")
