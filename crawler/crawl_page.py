"""What the crawl status page shows beyond the raw rows: what each counter means, the rate over
a stated window, the chart's geometry, the buttons a state allows and the errors by kind.

Layer: Django glue (reads only), used by ``crawler.selectors.crawl_status_get`` (the page and
its JSON, which the page's script re-renders from every two seconds) and the status template.
The chart is drawn from the same geometry on the server (the template) and in the browser
(``static/crawler/crawl_status.js``): plain SVG, no library. The freshness of the indexed copies
(their ages and what their last visits found) is computed as the page is shown.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.core.exceptions import FieldDoesNotExist
from django.utils.text import capfirst

from crawler.core.archive import skipped as archive_skipped
from crawler.core.definition.crawl import allowed_actions
from crawler.core.queue_server.freshness import freshness_figures
from crawler.core.transport import fetch_error_kinds

from .models import Crawl, PageOptions

# The buttons the page can show; "finish" and "saved" are the crawl's own transitions.
BUTTONS = ("start", "stop", "resume", "close")
RATE_WINDOW = 60.0  # seconds: "pages per second (now)" is the rate over the last minute
CHART_POINTS = 120  # the newest samples drawn (CrawlSample, one per services.SAMPLE_EVERY)

# counter -> (label, what it means). Each counts one thing; they agree: pages fetched <= urls
# seen (each url is fetched once per crawl, unless recrawled), pages fetched <= the crawl's
# page limit (per queue server), fetch errors = failed pages by kind + failed robots.txt by
# kind. robots.txt fetches are not pages.
COUNTERS: dict[str, tuple[str, str]] = {
    "pages_fetched": (
        "Pages fetched",
        "Page urls downloaded, whatever the answer (errors and 404s included). robots.txt "
        "fetches are not pages and are counted under robots.txt below."),
    "urls_seen": (
        "Urls seen",
        "Distinct urls accepted into the crawl queue: the seeds and every new url found "
        "(repeats, urls past the depth limit and urls the site rules refuse are not)."),
    "urls_queued": (
        "Urls queued",
        "Urls waiting in the queue now, robots.txt urls included (not yet handed to a "
        "fetcher)."),
    "documents_indexed": (
        "Documents indexed",
        "Documents added to the index: each page fetched with content, and one link "
        "document per kept link (so it can pass pages fetched)."),
    "fetch_errors": (
        "Fetch errors",
        "Downloads that failed, pages and robots.txt alike: no answer (timeout, connection "
        "refused or reset, DNS, TLS, address not allowed...) or an HTTP status of 400 or "
        "more but 404. The sum of the two tables of failures by kind below."),
    "bytes_downloaded": (
        "Bytes downloaded",
        "Bytes of page and robots.txt bodies received (up to each page's byte range)."),
    "hosts_seen": (
        "Hosts seen",
        "Distinct hosts (scheme, host and port) of the urls seen."),
}


def counters_legend() -> list[dict[str, str]]:
    """The counters in page order: name, slug (the page's data-counter), label, meaning."""
    return [{"name": name, "slug": name.replace("_", "-"), "label": label, "help": text}
            for name, (label, text) in COUNTERS.items()]


def page_actions(status: str, can_change: bool) -> list[str]:
    """The buttons the page shows in ``status`` (none to a user who may not change crawls)."""
    if not can_change:
        return []
    return [a for a in allowed_actions(status) if a in BUTTONS]


def rate_now(crawl: Crawl, now: datetime, window: float = RATE_WINDOW) -> tuple[float, float]:
    """(pages per second, seconds) over the last ``window`` seconds up to ``now``: the pages
    fetched since the newest sample at least ``window`` seconds old (or since the start, when
    the crawl is younger), divided by the seconds since then. An ended crawl's rate falls to
    0 once it has been over for ``window`` seconds."""
    if crawl.started_at is None:
        return 0.0, 0.0
    base = (crawl.samples.filter(at__lte=now - timedelta(seconds=window)).order_by("-at").values_list("at", "pages_fetched").first())
    since, pages = base if base is not None else (crawl.started_at, 0)
    since = max(since, crawl.started_at)
    seconds = (now - since).total_seconds()
    if seconds <= 0:
        return 0.0, 0.0
    return round(max(0, crawl.pages_fetched - pages) / seconds, 2), round(seconds, 1)


SERIES = (("pages_fetched", "fetched", "#417690"), ("documents_indexed", "indexed", "#2e8540"),
          ("fetch_errors", "errors", "#ba2121"))
WIDTH, HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 10, 40


def _nice_step(top: float, ticks: int = 4) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` ticks."""
    raw = max(top, 1e-6) / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if raw <= m * power * (1 + 1e-9))


def _time_label(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:g} s"
    if seconds < 7200:
        return f"{seconds / 60:g} min"
    return f"{seconds / 3600:g} h"


def chart(crawl: Crawl, points: int = CHART_POINTS) -> dict:
    """The rate chart: per second, pages fetched, documents indexed and fetch errors
    between consecutive samples, against the time since the crawl started; with axes, ticks,
    labels and a legend, as SVG coordinates (``series``: name, label, colour, points)."""
    rows = list(crawl.samples.order_by("-at")[: points + 1]
                .values_list("at", *(field for field, _, _ in SERIES)))
    rows.reverse()
    start = crawl.started_at or (rows[0][0] if rows else None)
    rates: list[tuple[float, list[float]]] = []
    for before, after in zip(rows, rows[1:], strict=False):
        dt = (after[0] - before[0]).total_seconds()
        if dt > 0 and start is not None:
            rates.append(((after[0] - start).total_seconds(),
                          [max(0.0, (a - b) / dt) for a, b in zip(after[1:], before[1:],
                                                                  strict=True)]))
    t_max = max([t for t, _ in rates] + [1.0])
    r_max = max([r for _, values in rates for r in values] + [1.0])
    t_step, r_step = _nice_step(t_max), _nice_step(r_max)
    t_top = t_step * -(-t_max // t_step)
    r_top = r_step * -(-r_max // r_step)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(t: float) -> float:
        return round(LEFT + t / t_top * plot_w, 1)

    def y(r: float) -> float:
        return round(TOP + plot_h - r / r_top * plot_h, 1)

    series = [{"name": label, "label": label, "color": color,
               "points": " ".join(f"{x(t)},{y(values[i])}" for t, values in rates)}
              for i, (_, label, color) in enumerate(SERIES)]
    return {
        "width": WIDTH, "height": HEIGHT, "left": LEFT, "top": TOP,
        "right": WIDTH - RIGHT, "bottom": HEIGHT - BOTTOM,
        "x_ticks": [{"at": x(i * t_step), "label": _time_label(round(i * t_step, 3))}
                    for i in range(int(round(t_top / t_step)) + 1)],
        "y_ticks": [{"at": y(i * r_step), "label": f"{round(i * r_step, 3):g}"}
                    for i in range(int(round(r_top / r_step)) + 1)],
        "x_label": "time since the crawl started", "y_label": "per second",
        "series": series, "empty": not rates,
    }


def errors_report(crawl: Crawl) -> dict:
    """The crawl's failed page downloads by kind (most frequent first, each with an example)
    and one line saying why pages failed, empty when none did."""
    kinds = fetch_error_kinds.rows(crawl.fetch_error_kinds)
    summary = ""
    if kinds:
        total = sum(int(row["count"]) for row in kinds)
        parts = [f"{row['label']} ({row['count']}, e.g. {row['url']}: {row['message']})"
                 for row in kinds[:5]]
        summary = (f"{total} of {crawl.pages_fetched} pages fetched failed: "
                   + "; ".join(parts))
    return {"fetch_errors_by_kind": kinds, "errors_summary": summary}


def age_text(seconds: float | None) -> str:
    """An age for people: ``"—"`` when unknown, else seconds, minutes, hours or days."""
    if seconds is None:
        return "\u2014"
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} seconds"


def freshness(crawl: Crawl, now: datetime) -> dict[str, object]:
    """The freshness of the crawl's indexed copies at ``now``
    (:func:`crawler.core.queue_server.freshness.freshness_figures`) with its ages for people, and
    whether
    the crawl recrawls pages (``page_recrawl_days`` of its Page Options)."""
    figures = freshness_figures(crawl.freshness, now.timestamp())
    days = int((crawl.page_options_snapshot or {}).get("page_recrawl_days", -1))
    return {**figures, "median_age_text": age_text(figures["median_age"]),
            "p90_age_text": age_text(figures["p90_age"]), "page_recrawl_days": days}
def archive_report(crawl: Crawl, servers: list[dict]) -> dict | None:
    """An archive crawl's source, how far its queue servers have listed it (``servers``: the
    counters of those working on it), and its records skipped by reason (most frequent
    first, each with an example); None for a web crawl."""
    if not crawl.is_archive:
        return None
    source = (crawl.archive_path if crawl.source == Crawl.Source.WARC else
              f"crawl {crawl.archive_of.name!r} ({crawl.archive_of.timestamp})"
              if crawl.archive_of is not None else "")
    rows = archive_skipped.rows(crawl.archive_skipped)
    total = sum(int(row["count"]) for row in rows)
    other: dict[str, int] = {}
    for counters in servers:
        for kind, count in (counters.get("archive_other") or {}).items():
            other[str(kind)] = other.get(str(kind), 0) + int(count)
    return {
        "kind": crawl.source, "label": crawl.get_source_display(), "source": source,
        "listed": sum(int(c.get("archive_listed") or 0) for c in servers),
        "listing_done": bool(servers) and all(c.get("archive_listing_done") for c in servers),
        "skipped_by_reason": rows, "skipped_total": total,
        "other_records": dict(sorted(other.items())),
        "skipped_summary": (f"{total} archive records skipped: " + "; ".join(
            f"{row['label']} ({row['count']}, e.g. {row['url']}: {row['message']})"
            for row in rows[:5])) if rows else "",
    }


def page_options_rows(snapshot: dict | None) -> list[tuple[str, object]]:
    """The rows of a crawl's "Page Options copied at start": each setting by its form label
    (the Page Options field's verbose name, as the Page Options page says it) rather than its
    internal name, with its value; the profile's name and its scrapers are shown apart."""
    rows = []
    for key, value in (snapshot or {}).items():
        if key in ("name", "scrapers"):
            continue
        try:
            label = capfirst(str(PageOptions._meta.get_field(key).verbose_name))
        except FieldDoesNotExist:
            label = capfirst(key.replace("_", " "))
        rows.append((label, value))
    return rows
