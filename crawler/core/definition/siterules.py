"""Allowed and disallowed sites: the crawl's url filter, and the parser that validates it.

Layer: ``crawler.core``. One rule per line; blank lines and lines starting with ``#`` are ignored:

* ``example.com`` or ``www.example.com`` — that host exactly (any scheme and port);
* ``domain:example.com`` — the domain and every host under it (``a.b.example.com``);
* ``regex:^https?://example\\.com/docs/`` — an RE2 regular expression (linear
  time: no backreferences or lookarounds) searched in the url;
* ``https://example.com/docs/`` — a url prefix (scheme, host and path prefix must match).

A crawl that is restricted to its seeds and allowed sites fetches a url only if it matches a seed
host or an allowed rule; any crawl refuses urls that match a disallowed rule.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from crawler.core.processing.linear_regex import LinearRegexError, compile_linear
from indexer.core.urls import url_host

_HOST_RE = re.compile(
    r"^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*\.?$"
)

# A rule's pattern compiled once per process (as re.search's own cache did).
_compiled = functools.lru_cache(maxsize=512)(compile_linear)


class SiteRuleError(ValueError):
    """A site rule that does not parse; ``line`` is 1-based."""

    def __init__(self, message: str, line: int = 0, text: str = "") -> None:
        self.line = line
        self.text = text
        super().__init__(f"line {line}: {message}" if line else message)


def normalize_host(host: str) -> str:
    """Lower-case a host name and encode an internationalised one as IDNA; validate it."""
    host = host.strip().rstrip(".").lower()
    if not host:
        raise ValueError("empty host name")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return ipaddress.ip_address(host).compressed
    except ValueError:
        pass
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"invalid host name {host!r}") from exc
    if not _HOST_RE.match(ascii_host):
        raise ValueError(f"invalid host name {host!r}")
    return ascii_host


@dataclass(frozen=True, slots=True)
class SiteRule:
    kind: str  # "host", "domain", "regex" or "prefix"
    value: str
    source: str = ""

    def matches(self, url: str, host: str) -> bool:
        if self.kind == "host":
            return host == self.value
        if self.kind == "domain":
            return host == self.value or host.endswith("." + self.value)
        if self.kind == "regex":
            return _compiled(self.value).search(url) is not None
        return url.startswith(self.value)


def parse_site_rules(text: str) -> tuple[SiteRule, ...]:
    """Parse a block of site rules; raise :class:`SiteRuleError` naming the first bad line."""
    rules = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        rules.append(_parse_line(line, number))
    return tuple(rules)


def site_rule_errors(text: str) -> list[SiteRuleError]:
    """Every line of a block of site rules that does not parse, in order (a form shows them
    all at once; :func:`parse_site_rules` stops at the first)."""
    errors = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            try:
                _parse_line(line, number)
            except SiteRuleError as exc:
                errors.append(exc)
    return errors


def _parse_line(line: str, number: int) -> SiteRule:
    lowered = line.lower()
    if lowered.startswith("regex:"):
        pattern = line[len("regex:"):].strip()
        if not pattern:
            raise SiteRuleError("regex: needs a pattern", number, line)
        try:
            compile_linear(pattern)
        except LinearRegexError as exc:
            raise SiteRuleError(
                f"bad regular expression {pattern!r}: {exc.message}", number, line
            ) from None
        return SiteRule("regex", pattern, line)
    if lowered.startswith("domain:"):
        value = line[len("domain:"):].strip()
        try:
            return SiteRule("domain", normalize_host(value), line)
        except ValueError as exc:
            raise SiteRuleError(str(exc), number, line) from None
    if "://" in line:
        try:
            parts = urlsplit(line)
            hostname, port = parts.hostname, parts.port  # ValueError: a bad IPv6 host or port
        except ValueError as exc:
            raise SiteRuleError(f"not a url: {exc}", number, line) from None
        if parts.scheme.lower() not in ("http", "https") or not hostname:
            raise SiteRuleError("a url rule needs http:// or https:// and a host", number, line)
        try:
            host = normalize_host(hostname)
        except ValueError as exc:
            raise SiteRuleError(str(exc), number, line) from None
        netloc = host + (f":{port}" if port else "")
        return SiteRule("prefix", f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}", line)
    if any(c in line for c in " /\t?#"):
        raise SiteRuleError(
            "not a host, domain:, regex: or http(s):// rule", number, line
        )
    try:
        return SiteRule("host", normalize_host(line), line)
    except ValueError as exc:
        raise SiteRuleError(str(exc), number, line) from None


@dataclass(frozen=True, slots=True)
class SiteRules:
    """The allowed and disallowed rules of one crawl, plus its seed hosts."""

    allowed: tuple[SiteRule, ...] = ()
    disallowed: tuple[SiteRule, ...] = ()
    restrict: bool = False
    seed_hosts: frozenset[str] = field(default_factory=frozenset)

    def permits(self, url: str) -> bool:
        """True when the crawl may fetch ``url``."""
        return not self.refusal(url)

    def refusal(self, url: str) -> str:
        """Why the crawl may not fetch ``url``, as a refused-url reason code: "site_rules" (a
        disallowed rule matches), "outside_seeds" (restricted to the seed and allowed sites,
        and it is on neither), "" when it may."""
        host = url_host(url)
        if any(rule.matches(url, host) for rule in self.disallowed):
            return "site_rules"
        if not self.restrict or host in self.seed_hosts or \
                any(rule.matches(url, host) for rule in self.allowed):
            return ""
        return "outside_seeds"
