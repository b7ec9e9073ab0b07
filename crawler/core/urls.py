"""URL canonicalisation and the URL facts page processing needs.

Layer: ``crawler.core`` (pure functions). Used by the link extractor (relative links against the
page or its ``<base>``), by meta-word generation (``site:``, ``path:``, ``filetype:``), and by the
fetcher and scheduler to name hosts. The url facts other apps share too (a url's host, a host's
company level domain, url hashes) are :mod:`indexer.core.urls`.

Canonical form: scheme and host lower case, default port removed, fragment removed, dot segments
resolved, an empty path written ``/``, spaces and other unsafe characters percent-encoded,
internationalised host names IDNA-encoded. Only ``http`` and ``https`` URLs are canonical;
everything else (``mailto:``, ``javascript:``...) has no canonical form (``None``).
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

MIN_URL_LEN = 5
MAX_URL_LEN = 2048  # longer URLs are not followed
_SAFE_PATH = "/%:@!$&'()*+,;=-._~"
_SAFE_QUERY = _SAFE_PATH + "?"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_OK = re.compile(r"^[a-z0-9.\-_]+$")
# Characters that quote() would change (anything outside the safe sets, and bare '%').
_NEEDS_QUOTE = re.compile(r"[^A-Za-z0-9/:@!$&'()*+,;=\-._~?]|%(?![0-9A-Fa-f]{2})")


def canonicalize(url: str, base: str | None = None) -> str | None:
    """The canonical form of ``url`` (resolved against ``base``), or ``None`` if it has none."""
    if not url:
        return None
    url = url.strip().replace("\n", "").replace("\r", "").replace("\t", "")
    if len(url) > MAX_URL_LEN * 2:
        return None
    try:
        if base:
            url = urljoin(base, url)
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            return None
        host = parts.hostname
        if not host:
            return None
        host = host.rstrip(".")
        if not _HOST_OK.match(host):
            host = host.encode("idna").decode("ascii")
        port = parts.port
    except (ValueError, UnicodeError):
        return None
    if not host or not _HOST_OK.match(host):
        return None
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path or "/"
    if "/." in path:
        trailing = path.endswith(("/", "/.", "/.."))
        path = posixpath.normpath(path)
        if path.startswith("//"):
            path = "/" + path.lstrip("/")
        if trailing and not path.endswith("/"):
            path += "/"
    if _NEEDS_QUOTE.search(path):
        path = quote(path, safe=_SAFE_PATH)
    query = parts.query
    if query and _NEEDS_QUOTE.search(query):
        query = quote(query, safe=_SAFE_QUERY)
    result = urlunsplit((scheme, netloc, path, query, ""))
    if not MIN_URL_LEN <= len(result) <= MAX_URL_LEN:
        return None
    return result


def host_url(url: str) -> str:
    """``scheme://host[:port]/`` of a URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.netloc}/"


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased: the key a host's robots data, errors,
    stalls and crawl delay are kept under (the scheduler and the fetchers agree on it)."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def domain_suffixes(host: str) -> list[str]:
    """The host and each parent domain: ``a.b.org`` -> ``['a.b.org', 'b.org', 'org']``."""
    labels = [label for label in host.split(".") if label]
    return [".".join(labels[i:]) for i in range(len(labels))]


def path_prefixes(url: str) -> list[str]:
    """``/``, then each longer prefix of the path: ``/a/b.html`` -> ``['/', '/a', '/a/b.html']``."""
    try:
        path = urlsplit(url).path or "/"
    except ValueError:
        return ["/"]
    prefixes = ["/"]
    current = ""
    for segment in path.split("/"):
        if not segment:
            continue
        current += "/" + segment
        prefixes.append(current)
    return prefixes


def file_extension(url: str) -> str:
    """The lower-case extension of the URL path's last segment ('' when none)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    last = path.rsplit("/", 1)[-1]
    if "." not in last:
        return ""
    ext = last.rsplit(".", 1)[-1].lower()
    return ext if ext.isalnum() and len(ext) <= 8 else ""


def is_recursive(url: str, repeats: int = 3) -> bool:
    """True for URLs whose path repeats one segment ``repeats`` times or more (crawler traps
    such as ``/a/b/a/b/a/b/``)."""
    try:
        segments = [s for s in urlsplit(url).path.split("/") if s]
    except ValueError:
        return False
    if len(segments) < repeats:
        return False
    counts: dict[str, int] = {}
    for segment in segments:
        counts[segment] = counts.get(segment, 0) + 1
        if counts[segment] >= repeats:
            return True
    return False


def levenshtein(a: str, b: str, limit: int | None = None) -> int:
    """Edit distance of two strings; stops early and returns ``limit + 1`` once it is known
    to exceed ``limit``."""
    if a == b:
        return 0
    if limit is not None and abs(len(a) - len(b)) > limit:
        return limit + 1
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if limit is not None and min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]
