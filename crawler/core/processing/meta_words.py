"""Meta words made at index time (Yioop's calculateMetas; the Yioop design document lists them).

Layer: ``crawler.core``. Meta words are terms with a prefix and no position (the index posts them
with frequency 0). The query side appends some of them to every query (``safe:true``,
``lang:xx``), so every document, link documents included, carries the ``:all`` forms and its
own values.

Page documents get: ``site:`` (``all``, the host and each parent domain), ``path:`` (``all``,
``/`` and each longer prefix), ``host:all`` (host roots only), ``filetype:`` (``all`` and the
extension or the MIME type's usual one), ``lang:`` (``all``, the major tag, the full tag),
``media:`` (``all`` and ``text``/``image``/``video``/``feed``), ``code:`` (``all`` and the HTTP
status), ``date:`` (the fetch day as ``Y``, ``Y-m``, ``Y-m-d``, ``Y-m-d-H``), ``modified:``
(the Last-Modified day, same forms), ``info:`` (the URL and its hash), ``link:`` (each outlink),
``numlinks:``, ``size:`` (5000-byte bucket), ``ip:``, ``server:``, ``location:`` (redirects) and
``safe:`` (``all`` and ``true``/``false``).

Media with a running time (a video page a scraper read) also get ``duration:`` words
(:func:`duration_words`): ``duration:all`` and, for each of :data:`DURATION_MINUTES`,
``duration:<t>-plus`` when it lasts at least ``t`` minutes, else ``duration:<t>-minus``
(Yioop's form), so ``duration:10-plus`` finds the videos of ten minutes or more.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Iterable
from email.utils import parsedate_to_datetime
from functools import lru_cache

from crawler.core.urls import domain_suffixes, file_extension, path_prefixes
from indexer.core.ids import hash8
from indexer.core.text import major

MIME_EXTENSIONS = {
    "text/html": "html", "application/xhtml+xml": "html", "text/plain": "txt",
    "application/pdf": "pdf", "application/rss+xml": "rss", "application/atom+xml": "atom",
    "application/x-sitemap": "xml", "application/xml": "xml", "text/xml": "xml",
    "text/robot": "txt", "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif",
    "image/webp": "webp", "image/svg+xml": "svg", "image/bmp": "bmp", "text/csv": "csv",
}
SIZE_BUCKET = 5000
DURATION_MINUTES = (1, 5, 10, 20, 30, 60)
# ISO 8601 durations as pages write them (schema.org's itemprop="duration"): P1DT2H3M4.5S
_ISO_DURATION = re.compile(
    r"P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?"
    r"(?:(\d+(?:\.\d+)?)S)?)?", re.IGNORECASE)
_CLOCK_DURATION = re.compile(r"(?:(\d+):)?(\d{1,2}):(\d{2})")


def parse_duration(text: str) -> float | None:
    """Seconds of a duration written as seconds (``253``), an ISO 8601 duration
    (``PT4M13S``) or a clock (``1:02:03``, ``4:13``); None for anything else."""
    value = text.strip()
    try:
        seconds = float(value)
    except ValueError:
        seconds = None
    if seconds is None:
        iso = _ISO_DURATION.fullmatch(value)
        clock = _CLOCK_DURATION.fullmatch(value)
        if iso and any(iso.groups()):
            days, hours, minutes, secs = (float(g or 0) for g in iso.groups())
            seconds = ((days * 24 + hours) * 60 + minutes) * 60 + secs
        elif clock:
            hours, minutes, secs = (float(g or 0) for g in clock.groups())
            seconds = (hours * 60 + minutes) * 60 + secs
    if seconds is None or not 0 <= seconds < 1e9:
        return None
    return seconds


def duration_words(seconds: float) -> list[str]:
    """``duration:all`` and ``duration:<t>-plus`` / ``-minus`` for each of
    :data:`DURATION_MINUTES` (see the module docstring)."""
    words = ["duration:all"]
    for minutes in DURATION_MINUTES:
        side = "plus" if seconds >= minutes * 60 else "minus"
        words.append(f"duration:{minutes}-{side}")
    return words


def url_hash_word(url: str) -> str:
    """URL-safe base64 of the URL's 8-byte hash, no padding (for ``info:``/``link:``)."""
    return base64.urlsafe_b64encode(hash8(url)).rstrip(b"=").decode("ascii")


def _date_words(prefix: str, seconds: float) -> list[str]:
    t = time.gmtime(seconds)
    return [
        f"{prefix}:{t.tm_year:04d}",
        f"{prefix}:{t.tm_year:04d}-{t.tm_mon:02d}",
        f"{prefix}:{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}",
        f"{prefix}:{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}-{t.tm_hour:02d}",
    ]


def http_date(value: str) -> float | None:
    """Seconds since the epoch of an HTTP date, or None."""
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def site_words(host: str) -> list[str]:
    return list(_site_words(host))


@lru_cache(maxsize=4096)
def _site_words(host: str) -> tuple[str, ...]:
    return ("site:all", *(f"site:{suffix}" for suffix in domain_suffixes(host)))


def lang_words(lang: str) -> list[str]:
    return list(_lang_words(lang))


@lru_cache(maxsize=256)
def _lang_words(lang: str) -> tuple[str, ...]:
    words = ["lang:all", f"lang:{major(lang).lower()}"]
    if lang.lower() != major(lang).lower():
        words.append(f"lang:{lang.lower()}")
    return tuple(words)


def safe_words(safe: bool) -> list[str]:
    return ["safe:all", "safe:true" if safe else "safe:false"]


def page_meta_words(
    *,
    url: str,
    host: str,
    status: int,
    mime_type: str,
    lang: str,
    media: str,
    safe: bool,
    fetched_at: float,
    last_modified: str = "",
    links: Iterable[str] = (),
    size: int = 0,
    ip: str = "",
    server: str = "",
    location: str | None = None,
    extra: Iterable[str] = (),
) -> tuple[str, ...]:
    """The meta words of a page document, without duplicates, in a stable order."""
    words: list[str] = site_words(host)
    words += ["path:all"] + [f"path:{p}" for p in path_prefixes(url)]
    if path_prefixes(url) == ["/"]:
        words.append("host:all")
    ext = file_extension(url) or MIME_EXTENSIONS.get(mime_type, "")
    words.append("filetype:all")
    if ext:
        words.append(f"filetype:{ext}")
    words += lang_words(lang)
    words += ["media:all", f"media:{media}"]
    words += ["code:all", f"code:{status}"]
    if fetched_at > 0:
        words += _date_words("date", fetched_at)
    modified = http_date(last_modified)
    if modified is not None:
        words += _date_words("modified", modified)
    words += [f"info:{url}", f"info:{url_hash_word(url)}"]
    link_list = list(links)
    words += [f"link:{target}" for target in link_list]
    words.append(f"numlinks:{len(link_list)}")
    words.append(f"size:{size // SIZE_BUCKET * SIZE_BUCKET}")
    if ip:
        words += ["ip:all", f"ip:{ip}"]
    if server:
        words.append(f"server:{server.split('/')[0].strip().lower()}")
    if location:
        words.append(f"location:{location}")
    words += safe_words(safe)
    words += list(extra)
    return tuple(dict.fromkeys(w for w in words if w and " " not in w))
