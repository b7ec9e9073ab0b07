"""Failed page downloads by kind, each kind with an example: why a crawl's pages failed.

Layer: ``crawler.core``. The fetcher's page handling (:mod:`crawler.core.fetcher.pages`) names
the kind of each failed page download (:func:`error_kind`) and records it, with the url and the
error's message, in the :class:`FetchErrorKinds` of the schedule's own queue server's outbox;
the batch carries them (``FetcherBatch.errors``); the queue server adds them up
(:meth:`FetchErrorKinds.add`), reports them in its heartbeat (``fetch_errors_by_kind``, a
mapping of counts the metrics endpoint exports, and ``fetch_error_examples``), and the crawl's
row holds the sum over queue servers (:func:`merge`), shown on the crawl's status page
(:func:`rows`). robots.txt failures are counted apart
(:mod:`crawler.core.queue_server.robots_failures`).

The JSON form (a batch's ``errors``, a queue server's state, the crawl row's
``fetch_error_kinds``)::

    {kind: {"count": n, "url": an example url, "message": its error}}

``kind`` is a fetch error's kind (:mod:`crawler.core.http.errors`: ``connection``,
``read_timeout``, ``dns``, ``tls``, ``egress_refused``, ``headers_too_large``...) or
``http_<status>`` for an HTTP answer of 400 or more other than 404 (a missing page is an
answer, not an error).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from crawler.core.queue_server.robots_failures import LABELS

MESSAGE_CHARS = 300
URL_CHARS = 500
MAX_KINDS = 64  # a hostile mix of statuses cannot grow a report without bound


def error_kind(status: int, error_kind_name: str | None) -> str | None:
    """The kind of a page download that failed, or None when it did not fail: an error
    without an answer is named by its fetch error's kind; an HTTP answer of 400 or more
    (but 404) is ``http_<status>``."""
    if error_kind_name:
        return str(error_kind_name)
    if status >= 400 and status != 404:
        return f"http_{status}"
    return None


def label(kind: str) -> str:
    """What a kind means, in the operator's words (``http_503``: "HTTP 503")."""
    if kind.startswith("http_"):
        return f"HTTP {kind[5:]}"
    return LABELS.get(kind, kind.replace("_", " "))


class FetchErrorKinds:
    """Counts of failed downloads by kind, with the first example of each kind seen."""

    __slots__ = ("kinds",)

    def __init__(self) -> None:
        self.kinds: dict[str, dict[str, Any]] = {}

    def record(self, kind: str, url: str, message: str, count: int = 1) -> None:
        """``count`` more failures of ``kind``; ``url`` and ``message`` are kept as its example
        when it is the first of its kind."""
        row = self.kinds.get(kind)
        if row is None:
            if len(self.kinds) >= MAX_KINDS:
                kind, row = "other", self.kinds.get("other")
            if row is None:
                row = self.kinds[kind] = {"count": 0, "url": str(url)[:URL_CHARS],
                                          "message": str(message)[:MESSAGE_CHARS]}
        row["count"] += int(count)

    def add(self, other: Any) -> None:
        """Add another report (its JSON form, or a :class:`FetchErrorKinds`)."""
        part = other if isinstance(other, FetchErrorKinds) else FetchErrorKinds.from_json(other)
        for kind, row in part.kinds.items():
            self.record(kind, row["url"], row["message"], row["count"])

    @property
    def total(self) -> int:
        return sum(int(row["count"]) for row in self.kinds.values())

    def counts(self) -> dict[str, int]:
        """kind -> count (the heartbeat's ``fetch_errors_by_kind``)."""
        return {kind: int(row["count"]) for kind, row in sorted(self.kinds.items())}

    def examples(self) -> dict[str, dict[str, str]]:
        """kind -> {"url", "message"} (the heartbeat's ``fetch_error_examples``)."""
        return {kind: {"url": row["url"], "message": row["message"]}
                for kind, row in sorted(self.kinds.items())}

    def to_json(self) -> dict[str, dict[str, Any]]:
        return {kind: dict(row) for kind, row in self.kinds.items()}

    @classmethod
    def from_json(cls, data: Any) -> FetchErrorKinds:
        """A report from its JSON form; anything malformed counts as nothing."""
        out = cls()
        if not isinstance(data, Mapping):
            return out
        try:
            for kind, row in data.items():
                count = int(row["count"])
                if count > 0:
                    out.record(str(kind), str(row.get("url", "")),
                               str(row.get("message", "")), count)
        except (TypeError, ValueError, KeyError, AttributeError):
            return cls()
        return out

    @classmethod
    def from_heartbeat(cls, counts: Any, examples: Any) -> FetchErrorKinds:
        """A queue server's heartbeat (``fetch_errors_by_kind`` and ``fetch_error_examples``)
        back as a report."""
        if not isinstance(counts, Mapping):
            return cls()
        examples = examples if isinstance(examples, Mapping) else {}
        rows = {}
        for kind, count in counts.items():
            example = examples.get(kind)
            example = example if isinstance(example, Mapping) else {}
            rows[kind] = {"count": count, "url": example.get("url", ""),
                          "message": example.get("message", "")}
        return cls.from_json(rows)


def merge(reports: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The sum of several reports (the first example of each kind kept), as JSON."""
    total = FetchErrorKinds()
    for report in reports:
        total.add(report)
    return total.to_json()


def merge_heartbeats(reports: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The sum of several queue servers' heartbeat counters (their ``fetch_errors_by_kind``
    and ``fetch_error_examples``), as JSON: what the crawl's row holds."""
    return merge(FetchErrorKinds.from_heartbeat(r.get("fetch_errors_by_kind"),
                                                r.get("fetch_error_examples"))
                 for r in reports)


def rows(report: Any, label_of: Callable[[str], str] = label) -> list[dict[str, Any]]:
    """The kinds of a report, most frequent first, for a table: kind, label (``label_of``
    the kind), count, url, message."""
    kinds = FetchErrorKinds.from_json(report).kinds
    ordered = sorted(kinds.items(), key=lambda kv: (-kv[1]["count"], kv[0]))
    return [{"kind": kind, "label": label_of(kind), **row} for kind, row in ordered]


def examples_text(kinds: list[dict[str, Any]], limit: int = 5) -> str:
    """The first ``limit`` of :func:`rows` as one line: label, count and an example each."""
    return "; ".join(f"{row['label']} ({row['count']}, example: {row['url']}: "
                     f"{row['message']})" for row in kinds[:limit])


def nothing_indexed_reason(documents_indexed: int, kinds: list[dict[str, Any]],
                           what: Callable[[int], str]) -> str:
    """Why a crawl that ended with nothing indexed did, when ``kinds`` (:func:`rows` of a
    report) explain it: ``what`` of their total count, then examples; an empty string
    otherwise."""
    if documents_indexed > 0 or not kinds:
        return ""
    total = sum(int(row["count"]) for row in kinds)
    return f"nothing was indexed; {what(total)}: {examples_text(kinds)}"


def end_reason(documents_indexed: int, pages_fetched: int, report: Any) -> str:
    """Why a crawl that ended with nothing indexed did, when failed page downloads explain
    it; an empty string otherwise."""
    return nothing_indexed_reason(
        documents_indexed, rows(report),
        lambda failed: f"{failed} of {pages_fetched} pages fetched failed")
