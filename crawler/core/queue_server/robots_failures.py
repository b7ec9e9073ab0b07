"""robots.txt fetches that failed: counted by kind, with an example, and told to the operator.

Layer: ``crawler.core``. A host whose robots.txt cannot be fetched (a connection reset, a TLS
error, an HTTP 5xx...) is disallowed for the crawl
(:func:`crawler.core.scheduler.robots.rules_for_status`),
so a crawl whose every robots.txt failed fetches nothing at all. The queue server records each
robots.txt answer (:meth:`RobotsFailures.record`); its report, the sum over queue servers
(:func:`merge`), is what the crawl's admin page shows, and :func:`end_reason` is what a crawl
that ended with nothing indexed says about it.

The JSON form (a queue server's report, the crawl row's ``robots_failures``)::

    {"fetches": robots.txt answers, "failed": those that failed,
     "kinds": {kind: {"count": n, "url": an example url, "message": its error}}}

``kind`` is a fetch error's kind (:mod:`crawler.core.http.errors`: ``connection``, ``tls``,
``dns``...) or ``http_<status>`` for an HTTP answer other than 2xx and 404.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MESSAGE_CHARS = 300

LABELS = {
    "connection": "connection refused or reset", "tls": "TLS error",
    "dns": "host name did not resolve", "connect_timeout": "connection timed out",
    "read_timeout": "no answer in time", "deadline": "too slow to answer",
    "bad_response": "not a valid HTTP answer",
    # refused before connecting: outside the allowed networks (or one of the engine's own)
    "egress_refused": "address not allowed (CRAWLER_ALLOWED_NETWORKS)",
    "too_many_redirects": "too many redirects", "redirect_loop": "redirect loop",
    "headers_too_large": "headers too large", "invalid_url": "invalid url",
    # the fetcher's own settings, not the site: every fetch fails until they are fixed
    "configuration": "the crawler's configuration (CRAWLER_CA_BUNDLE...)",
}


def label(kind: str) -> str:
    """What a failure kind means, in the operator's words."""
    if kind.startswith("http_"):
        return f"HTTP {kind[5:]}"
    return LABELS.get(kind, kind.replace("_", " "))


def failure_kind(status: int, error: str | None) -> str | None:
    """The kind of a failed robots.txt answer, or None when it did not fail (2xx, 404)."""
    if error:
        return str(error)
    if 200 <= status < 300 or status == 404:
        return None
    return f"http_{status}" if status else "fetch"


@dataclass(slots=True)
class RobotsFailures:
    """One queue server's robots.txt answers and failures (see the module docstring)."""

    fetches: int = 0
    kinds: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record(self, url: str, status: int, error: str | None = None,
               message: str | None = None) -> str | None:
        """One robots.txt answer for ``url``: ``status`` (0 without one) and, when it failed
        without an answer, the fetch error's kind and message. Returns the failure's kind, or
        None when it did not fail."""
        self.fetches += 1
        kind = failure_kind(int(status), error)
        if kind is None:
            return None
        row = self.kinds.get(kind)
        if row is None:
            text = message or (f"answered HTTP {status}" if status else "failed")
            row = self.kinds[kind] = {"count": 0, "url": url,
                                      "message": str(text)[:MESSAGE_CHARS]}
        row["count"] += 1
        return kind

    @property
    def failed(self) -> int:
        return sum(int(row["count"]) for row in self.kinds.values())

    def to_json(self) -> dict[str, Any]:
        return {"fetches": self.fetches, "failed": self.failed,
                "kinds": {kind: dict(row) for kind, row in self.kinds.items()}}

    @classmethod
    def from_json(cls, data: Any) -> RobotsFailures:
        """The counts of a report (anything malformed counts as nothing)."""
        failures = cls()
        if not isinstance(data, Mapping):
            return failures
        try:
            failures.fetches = int(data.get("fetches", 0))
            for kind, row in (data.get("kinds") or {}).items():
                failures.kinds[str(kind)] = {"count": int(row["count"]), "url": str(row["url"]),
                                             "message": str(row["message"])[:MESSAGE_CHARS]}
        except (TypeError, ValueError, KeyError, AttributeError):
            return cls()
        return failures


def merge(reports: Iterable[Any]) -> dict[str, Any]:
    """The sum of several queue servers' reports (the first example of each kind kept)."""
    total = RobotsFailures()
    for report in reports:
        part = RobotsFailures.from_json(report)
        total.fetches += part.fetches
        for kind, row in part.kinds.items():
            held = total.kinds.setdefault(kind, {**row, "count": 0})
            held["count"] += row["count"]
    return total.to_json()


def rows(report: Any) -> list[dict[str, Any]]:
    """The kinds of a report, most frequent first, for a table: label, count, url, message."""
    failures = RobotsFailures.from_json(report)
    ordered = sorted(failures.kinds.items(), key=lambda kv: (-kv[1]["count"], kv[0]))
    return [{"kind": kind, "label": label(kind), **row} for kind, row in ordered]


def summary(report: Any) -> str:
    """``3 hosts, TLS error (example: https://a.example/robots.txt: ...)``; several kinds
    are listed one after the other, most frequent first."""
    failures = RobotsFailures.from_json(report)
    parts = [f"{row['label']} (example: {row['url']}: {row['message']})" for row in
             rows(report)]
    hosts = failures.failed
    return f"{hosts} host{'s' if hosts != 1 else ''}, " + "; ".join(parts)


def end_reason(documents_indexed: int, report: Any) -> str:
    """Why a crawl that ended with nothing indexed did, when robots.txt failures explain it;
    an empty string otherwise."""
    failures = RobotsFailures.from_json(report)
    if documents_indexed > 0 or not failures.failed:
        return ""
    if failures.failed >= failures.fetches:
        return f"every robots.txt fetch failed: {summary(report)}"
    return (f"nothing was indexed; {failures.failed} of {failures.fetches} robots.txt "
            f"fetches failed: {summary(report)}")
