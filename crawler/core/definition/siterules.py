"""Allowed and disallowed sites: the crawl's url filter, and the parser that validates it.

Layer: ``crawler.core``. One rule per line; blank lines and lines starting with ``#`` are ignored:

* ``example.com`` or ``www.example.com`` — that host exactly (any scheme and port);
* ``domain:example.com`` — the domain and every host under it (``a.b.example.com``);
* ``regex:^https?://example\\.com/docs/`` — an RE2 regular expression (linear
  time: no backreferences or lookarounds) searched in the url;
* ``https://example.com/docs/`` — a url prefix (scheme, host and path prefix must match).

A crawl that is restricted to its seeds and allowed sites fetches a url only if it matches a seed
host or an allowed rule; any crawl refuses urls that match a disallowed rule.

Quotas (Yioop's ``site#quota``): a disallowed-sites line that ends in ``#N`` (N a whole number
above 0), such as ``domain:example.com#100``, is not a ban but a quota: at most N urls of the
sites it matches are scheduled per hour (:attr:`SiteRules.quotas`; the queue server keeps the
others queued for a later hour, ``crawler.core.scheduler.builder``). A quota in the allowed
sites is an error.
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


_QUOTA = re.compile(r"^(.*\S)\s*#\s*(-?\d+)$")
MAX_QUOTA = 10_000_000


def _split_quota(line: str, number: int, quotas: bool) -> tuple[str, int]:
    """(the rule, its quota, 0 when none) of a line; a quota where none is allowed, or one
    that is not a whole number above 0, is a :class:`SiteRuleError`."""
    match = _QUOTA.match(line)
    if match is None:
        return line, 0
    rule, value = match.group(1), int(match.group(2))
    if not quotas:
        raise SiteRuleError("a quota (site#N) belongs in the disallowed sites", number, line)
    if not 0 < value <= MAX_QUOTA:
        raise SiteRuleError(f"a quota must be a whole number of urls per hour from 1 to "
                            f"{MAX_QUOTA}, not {value}", number, line)
    return rule, value


def parse_site_rules(text: str, quotas: bool = False) -> tuple[SiteRule, ...]:
    """Parse a block of site rules; raise :class:`SiteRuleError` naming the first bad line.
    ``quotas``: the block may hold ``rule#N`` quota lines (the disallowed sites); they are
    left out here (see :func:`parse_quotas`)."""
    rules = []
    for number, line in _lines(text):
        rule, quota = _split_quota(line, number, quotas)
        parsed = _parse_line(rule, number)
        if not quota:
            rules.append(parsed)
    return tuple(rules)


def parse_quotas(text: str) -> tuple[tuple[SiteRule, int], ...]:
    """The ``rule#N`` quota lines of a disallowed-sites block: (rule, urls per hour)."""
    quotas = []
    for number, line in _lines(text):
        rule, quota = _split_quota(line, number, True)
        if quota:
            quotas.append((_parse_line(rule, number), quota))
    return tuple(quotas)


def _lines(text: str) -> list[tuple[int, str]]:
    return [(number, line) for number, raw in enumerate(text.splitlines(), start=1)
            if (line := raw.strip()) and not line.startswith("#")]


def site_rule_errors(text: str, quotas: bool = False) -> list[SiteRuleError]:
    """Every line of a block of site rules that does not parse, in order (a form shows them
    all at once; :func:`parse_site_rules` stops at the first)."""
    errors = []
    for number, line in _lines(text):
        try:
            _parse_line(_split_quota(line, number, quotas)[0], number)
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
    """The allowed and disallowed rules of one crawl, plus its seed hosts and its quotas
    (rule, urls per hour)."""

    allowed: tuple[SiteRule, ...] = ()
    disallowed: tuple[SiteRule, ...] = ()
    restrict: bool = False
    seed_hosts: frozenset[str] = field(default_factory=frozenset)
    quotas: tuple[tuple[SiteRule, int], ...] = ()

    def quota_of(self, url: str, host: str) -> tuple[str, int] | None:
        """(the rule's text, urls per hour) of the first quota matching ``url``; None."""
        for rule, limit in self.quotas:
            if rule.matches(url, host):
                return rule.source, limit
        return None

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
