"""Seed-site urls: validation and canonical form, and the bulk "one url per line" entry.

Layer: ``crawler.core``. The canonical form is the one the scheduler keys urls by: lower-case
scheme and host (IDNA), no default port, no fragment, ``/`` for an empty path.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from crawler.core.definition.siterules import normalize_host

MAX_URL_LEN = 2048


class SeedUrlError(ValueError):
    """A seed url that cannot be crawled; ``line`` is 1-based when it came from a bulk entry."""

    def __init__(self, message: str, line: int = 0, text: str = "") -> None:
        self.line = line
        self.text = text
        super().__init__(f"line {line} ({text!r}): {message}" if line else message)


def canonical_seed_url(raw: str) -> str:
    """Validate ``raw`` as an http(s) url and return its canonical form."""
    value = raw.strip()
    if not value:
        raise SeedUrlError("empty url")
    if len(value) > MAX_URL_LEN:
        raise SeedUrlError(f"url longer than {MAX_URL_LEN} characters")
    if "://" not in value:
        raise SeedUrlError("url needs a scheme: http:// or https://")
    if any(c.isspace() for c in value):
        raise SeedUrlError("url contains white space")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise SeedUrlError(f"malformed url: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise SeedUrlError(f"scheme {scheme!r} is not crawlable: use http or https")
    if not parts.hostname:
        raise SeedUrlError("url has no host")
    if parts.username or parts.password:
        raise SeedUrlError("url must not carry a user name or password")
    try:
        host = normalize_host(parts.hostname)
    except ValueError as exc:
        raise SeedUrlError(str(exc)) from None
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    default_port = {"http": 80, "https": 443}[scheme]
    netloc = host if port in (None, default_port) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def bad_seed_lines(text: str) -> list[SeedUrlError]:
    """Every bad line of a bulk entry (one url per line, blank lines and ``#`` comments
    skipped), in order, each error naming its line: a form shows them all at once."""
    errors = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            canonical_seed_url(line)
        except SeedUrlError as exc:
            errors.append(SeedUrlError(str(exc), number, line))
    return errors


@dataclass(frozen=True, slots=True)
class BulkSeedResult:
    urls: tuple[str, ...]          # canonical, in input order, without repeats
    duplicates: tuple[str, ...]    # repeated lines of the input, dropped


def parse_seed_lines(text: str) -> BulkSeedResult:
    """Parse one url per line (blank lines and ``#`` comments skipped).

    Raises :class:`SeedUrlError` naming the first bad line, so that nothing is half-added.
    """
    urls: list[str] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            url = canonical_seed_url(line)
        except SeedUrlError as exc:
            raise SeedUrlError(str(exc), number, line) from None
        if url in seen:
            duplicates.append(url)
            continue
        seen.add(url)
        urls.append(url)
    return BulkSeedResult(tuple(urls), tuple(duplicates))
