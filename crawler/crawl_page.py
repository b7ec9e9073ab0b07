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
from django.utils import timezone
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
RIGHT_AXIS = ("indexed",)  # series drawn against the right axis (link documents: 10x pages)
WIDTH, HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 56, 56, 10, 40
SHORTEST_STEP = 1.0  # seconds: a last interval shorter than this is merged into the one before


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


def _chart_counts(crawl: Crawl, points: int, now: datetime) -> list[tuple[float, list[int]]]:
    """(seconds since the start, counters) to draw between: the crawl's start (every counter
    0, when the newest samples reach back to it), its newest samples, and its counters now (at
    ``now`` while it runs, at its stop once stopped). The crawl's row is updated every few
    seconds, so its counters at ``now`` never claim more than happened by then."""
    rows = list(crawl.samples.order_by("-at")[: points + 1]
                .values_list("at", *(field for field, _, _ in SERIES)))
    rows.reverse()
    start = crawl.started_at or (rows[0][0] if rows else None)
    if start is None:
        return []
    counts = [((at - start).total_seconds(), list(values)) for at, *values in rows]
    counts = [c for c in counts if c[0] > 0]
    if len(rows) <= points:  # the samples reach back to the start
        counts.insert(0, (0.0, [0] * len(SERIES)))
    end = crawl.stopped_at if crawl.stopped_at and not crawl.is_active else now
    current = (max(0.0, (end - start).total_seconds()),
               [getattr(crawl, field) for field, _, _ in SERIES])
    if counts and current[0] > counts[-1][0]:
        if len(counts) > 1 and current[0] - counts[-1][0] < SHORTEST_STEP:
            counts.pop()  # a split second after a sample: its rate would be a spike
        counts.append(current)
    return counts


def _axis(top: float) -> tuple[float, float]:
    """(step, top of the axis) for rates up to ``top``."""
    step = _nice_step(top)
    return step, step * -(-top // step)


def chart(crawl: Crawl, points: int = CHART_POINTS, now: datetime | None = None) -> dict:
    """The rate chart: per second, pages fetched, documents indexed and fetch errors
    between consecutive counts (:func:`_chart_counts`), drawn as steps (each rate a level line
    over its interval, so one interval already shows), against the time since the crawl
    started; pages and errors on the left axis, documents indexed (about ten link documents
    a page) on the right one, each scaled to its own series. As SVG coordinates (``series``:
    name, label, colour, axis, points)."""
    counts = _chart_counts(crawl, points, now or timezone.now())
    steps: list[tuple[float, float, list[float]]] = []
    for (t0, before), (t1, after) in zip(counts, counts[1:], strict=False):
        if t1 > t0:
            steps.append((t0, t1, [max(0.0, (a - b) / (t1 - t0))
                                   for a, b in zip(after, before, strict=True)]))
    right = [i for i, (_, label, _) in enumerate(SERIES) if label in RIGHT_AXIS]
    t_max = max([t1 for _, t1, _ in steps] + [1.0])
    left_max = max([r[i] for *_, r in steps for i in range(len(SERIES)) if i not in right]
                   + [1.0])
    right_max = max([r[i] for *_, r in steps for i in right] + [1.0])
    t_step, t_top = _axis(t_max)
    l_step, l_top = _axis(left_max)
    r_step, r_top = _axis(right_max)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(t: float) -> float:
        return round(LEFT + t / t_top * plot_w, 1)

    def y(r: float, top: float) -> float:
        return round(TOP + plot_h - r / top * plot_h, 1)

    series = []
    for i, (_, label, color) in enumerate(SERIES):
        top = r_top if i in right else l_top
        series.append({"name": label, "label": label, "color": color,
                       "axis": "right" if i in right else "left",
                       "points": " ".join(f"{x(t0)},{y(r[i], top)} {x(t1)},{y(r[i], top)}"
                                          for t0, t1, r in steps)})
    return {
        "width": WIDTH, "height": HEIGHT, "left": LEFT, "top": TOP,
        "right": WIDTH - RIGHT, "bottom": HEIGHT - BOTTOM,
        "x_ticks": [{"at": x(i * t_step), "label": _time_label(round(i * t_step, 3))}
                    for i in range(int(round(t_top / t_step)) + 1)],
        "y_ticks": [{"at": y(i * l_step, l_top), "label": f"{round(i * l_step, 3):g}"}
                    for i in range(int(round(l_top / l_step)) + 1)],
        "y2_ticks": [{"at": y(i * r_step, r_top), "label": f"{round(i * r_step, 3):g}"}
                     for i in range(int(round(r_top / r_step)) + 1)],
        "x_label": "time since the crawl started", "y_label": "pages per second",
        "y2_label": "documents per second",
        "series": series, "empty": not steps,
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
