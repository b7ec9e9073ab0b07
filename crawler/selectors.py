"""Reads for crawl processes: database rows in, frozen config objects out.

Layer: Django glue. This is the only way ``core`` code sees configuration: queue servers
and fetchers call these once and pass the result into ``core`` constructors; the search side
builds its options from :func:`page_options_data_get` and finds the queue servers it reads
over HTTP with :func:`queue_servers_elsewhere_list`.

Every read of the crawl rows is here, the ones the writes need included (the live queue servers,
a Page Options profile's snapshot): ``crawler.services`` imports this module, never the reverse.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.forms.models import model_to_dict
from django.utils import timezone

from classifiers.core.apply import ClassifierRef
from classifiers.selectors import classifier_uses_snapshot
from crawler.core.archive.source import ArchiveKind, ArchiveSource
from crawler.core.definition.crawl import (
    CrawlConfig,
    CrawlOrder,
    CrawlStatus,
    CrawlTimeOptions,
    RobotsBehaviour,
    ScraperSpec,
    SeedSpec,
    Summarizer,
)
from crawler.core.definition.siterules import SiteRules, parse_quotas, parse_site_rules
from crawler.core.definition.sleep import SleepWindow
from crawler.core.processing.builtin_scrapers import BUILTIN_NAMES, BUILTIN_SCRAPERS, overridden_by
from crawler.core.processing.scrapers import ScraperConfig
from crawler.core.queue_server import robots_failures
from crawler.core.queue_server.heartbeat import crawl_counters, reported_crawls
from indexer.core.policies import CrawlPolicy
from indexer.core.shard_token import registration_ok
from indexer.core.urls import url_host

from . import crawl_page
from .models import Crawl, Fetcher, PageOptions, QueueServer
from .validators import parse_extract_fields, parse_file_types, parse_meta_words

logger = logging.getLogger(__name__)
# A queue server that has not reported for this long is treated as gone.
HEARTBEAT_TIMEOUT = timedelta(seconds=60)
# A fetcher process silent for this many heartbeats (FETCHER_HEARTBEAT_SECONDS) is shown as
# gone (``crawler.machines.presence`` writes the heartbeats).
GONE_AFTER_BEATS = 3

class ConfigNotFound(LookupError):
    """The crawl (or Page Options) asked for does not exist."""


@dataclass(frozen=True, slots=True)
class QueueServerInfo:
    server_id: int
    base_url: str
    state: str
    last_heartbeat: datetime | None


def live_queue_servers() -> list[QueueServer]:
    """The queue servers up and heard from within :data:`HEARTBEAT_TIMEOUT`."""
    cutoff = timezone.now() - HEARTBEAT_TIMEOUT
    return list(
        QueueServer.objects.filter(state=QueueServer.State.UP, last_heartbeat__gte=cutoff)
    )


def registered_queue_servers() -> list[QueueServer]:
    """The live queue servers whose row carries a valid registration: its number and url
    signed by the queue server's own heartbeat with the key derived from the shared token
    (:func:`indexer.core.shard_token.registration_ok`). The shard token is sent only to
    these (and to the queue servers ``SEARCH_REMOTE_QUEUE_SERVERS`` declares): a row whose
    url was changed by anything but its queue server is skipped, with a warning."""
    secret = str(settings.QUEUE_SERVER_TOKEN)
    kept = []
    for q in live_queue_servers():
        if registration_ok(secret, q.server_id, q.base_url, q.registration):
            kept.append(q)
        else:
            logger.warning("queue server %d's row (url %r) does not carry its registration "
                           "with the shared token: not sent the shard token", q.server_id,
                           q.base_url)
    return kept


def page_options_snapshot(options: PageOptions) -> dict:
    """A JSON copy of a Page Options profile, scrapers and classifiers included (a crawl's
    copy records the classifier versions it runs)."""
    data = model_to_dict(options, exclude=["id", "scrapers", "is_default"])
    data["scrapers"] = [
        model_to_dict(s, exclude=["id"]) for s in options.scrapers.order_by("-priority", "name")
    ]
    data.update(classifier_uses_snapshot(options.pk))
    data["name"] = options.name
    return data


def _options_dict(crawl: Crawl) -> dict:
    return crawl.page_options_snapshot or page_options_snapshot(crawl.page_options)


def crawl_time_options_from(data: dict) -> CrawlTimeOptions:
    scrapers = tuple(
        ScraperSpec(
            name=s["name"], signature=s["signature"], priority=int(s["priority"]),
            text_path=s.get("text_path", ""),
            delete_paths=tuple(x.strip() for x in s.get("delete_paths", "").splitlines()
                               if x.strip()),
            extract_fields=parse_extract_fields(s.get("extract_fields", "")),
            meta_words=parse_meta_words(s.get("meta_words", "")),
        )
        for s in data.get("scrapers", [])
    )
    # a crawl started before the built-in scrapers existed ran without them
    disabled = data.get("disabled_builtin_scrapers", BUILTIN_NAMES)
    return CrawlTimeOptions(
        byte_range=int(data["byte_range"]),
        max_description_len=int(data["max_description_len"]),
        # a crawl started before the option existed indexed its summaries only
        index_whole_page=bool(data.get("index_whole_page", False)),
        summarizer=Summarizer(data["summarizer"]),
        max_links_to_extract=int(data["max_links_to_extract"]),
        cache_pages=bool(data["cache_pages"]),
        page_recrawl_days=int(data["page_recrawl_days"]),
        file_types=parse_file_types(data.get("file_types", "")),
        robots=RobotsBehaviour(data["robots"]),
        page_rules=data.get("page_rules", ""),
        scrapers=scrapers,
        classifiers=tuple(ClassifierRef.from_dict(c) for c in data.get("classifiers", [])),
        disabled_builtin_scrapers=tuple(str(name) for name in disabled),
    )


def archive_source_get(crawl: Crawl) -> ArchiveSource | None:
    """An archive crawl's source as the crawl processes read it (an earlier crawl's bundles
    under this machine's WORK_DIRECTORY); None for a web crawl."""
    if crawl.source == Crawl.Source.WARC:
        return ArchiveSource(ArchiveKind.WARC, crawl.archive_path,
                             max_record_bytes=settings.ARCHIVE_MAX_RECORD_BYTES,
                             roots=tuple(str(root) for root in settings.ARCHIVE_ROOTS))
    if crawl.source == Crawl.Source.CRAWL and crawl.archive_of is not None:
        return ArchiveSource(ArchiveKind.CRAWL, str(settings.WORK_DIRECTORY),
                             crawl.archive_of.timestamp)
    return None


def crawl_config_get(crawl_id: int) -> CrawlConfig:
    """The frozen config of one crawl (its Page Options as copied when it started)."""
    try:
        crawl = Crawl.objects.select_related("page_options", "archive_of").get(pk=crawl_id)
    except Crawl.DoesNotExist:
        raise ConfigNotFound(f"crawl {crawl_id} does not exist") from None
    seeds = tuple(
        SeedSpec(url=s.url, policy=CrawlPolicy(s.policy), trust_weight=s.trust_weight)
        for s in crawl.seeds.order_by("id")
    )
    rules = SiteRules(
        allowed=parse_site_rules(crawl.allowed_sites),
        disallowed=parse_site_rules(crawl.disallowed_sites, quotas=True),
        restrict=crawl.restrict_to_seeds,
        seed_hosts=frozenset(url_host(s.url) for s in seeds),
        quotas=parse_quotas(crawl.disallowed_sites),
    )
    return CrawlConfig(
        crawl_id=crawl.pk,
        timestamp=crawl.timestamp,
        name=crawl.name,
        order=CrawlOrder(crawl.order),
        max_pages=crawl.max_pages,
        max_depth=crawl.max_depth,
        recrawl_days=crawl.recrawl_days,
        restrict_to_seeds=crawl.restrict_to_seeds,
        max_domain_share=crawl.max_domain_share / 100.0,
        favor_tier_bonus=crawl.favor_tier_bonus,
        distrust_tier_penalty=crawl.distrust_tier_penalty,
        distrust_max_depth=crawl.distrust_max_depth,
        policy_within_domain=crawl.policy_within_domain,
        needy_threshold=crawl.needy_threshold,
        priority_importance_weight=crawl.priority_importance_weight,
        priority_need_weight=crawl.priority_need_weight,
        site_rules=rules,
        seeds=seeds,
        sleep=SleepWindow.parse(crawl.sleep_window),
        page_options=crawl_time_options_from(_options_dict(crawl)),
        archive=archive_source_get(crawl),
    )


def active_crawls_get() -> tuple[CrawlConfig, ...]:
    """The running crawls' configs, in the order of their channels (several run at once)."""
    return tuple(crawl_config_get(pk) for pk in Crawl.objects.filter(
        status=CrawlStatus.RUNNING).order_by("channel").values_list("pk", flat=True))


def page_options_data_get(crawl_id: int | None = None) -> dict | None:
    """Page Options as plain data (``page_options_snapshot``'s dict): crawl
    ``crawl_id``'s copy if given (ConfigNotFound when there is no such crawl), else the default
    profile's (None when there is no default profile)."""
    if crawl_id is not None:
        crawl = Crawl.objects.select_related("page_options").filter(pk=crawl_id).first()
        if crawl is None:
            raise ConfigNotFound(f"crawl {crawl_id} does not exist")
        return _options_dict(crawl)
    options = PageOptions.objects.filter(is_default=True).first()
    return None if options is None else page_options_snapshot(options)


def _info(q: QueueServer) -> QueueServerInfo:
    return QueueServerInfo(q.server_id, q.base_url, q.state, q.last_heartbeat)


def queue_servers_list() -> tuple[QueueServerInfo, ...]:
    return tuple(_info(q) for q in QueueServer.objects.order_by("server_id"))


def queue_servers_elsewhere_list(this_machine_url: str) -> tuple[QueueServerInfo, ...]:
    """The live, validly registered queue servers (a heartbeat within ``HEARTBEAT_TIMEOUT``,
    :func:`registered_queue_servers`) that registered a url other than ``this_machine_url`` (``settings.QUEUE_SERVER_BASE_URL``, the
    url this machine's queue servers register): the shards a search here reads over HTTP,
    by server number. Urls are compared without their trailing slash."""
    here = this_machine_url.rstrip("/")
    return tuple(_info(q) for q in sorted(registered_queue_servers(), key=lambda q: q.server_id)
                 if q.base_url and q.base_url.rstrip("/") != here)


def _disk_reason(counters: dict | None) -> str:
    disk = (counters or {}).get("disk") or {}
    return str(disk.get("reason") or "") if disk.get("paused") else ""


def crawl_disk_pauses(crawl: Crawl) -> list[str]:
    """Why the crawl is paused for disk space, one line per live queue server working on it
    that says so ("queue server 0 paused: disk nearly full, ..."); empty when none is (or the
    crawl is not active)."""
    if not crawl.is_active:
        return []
    return [f"queue server {q.server_id} {reason}"
            for q in sorted(live_queue_servers(), key=lambda q: q.server_id)
            if crawl_counters(q.counters, crawl.pk) is not None
            and (reason := _disk_reason(q.counters))]


def crawl_status_get(crawl: Crawl) -> dict:
    """Counters of a crawl and of the queue servers working on it, for the live status page."""
    now = timezone.now()
    elapsed = 0.0
    if crawl.started_at:
        end = crawl.stopped_at if crawl.stopped_at and not crawl.is_active else now
        elapsed = max(0.0, (end - crawl.started_at).total_seconds())
    servers = []
    tiers: dict[str, int] = {}
    working: list[dict] = []  # the counters of the queue servers working on the crawl
    error_hosts: dict[str, int] = {}
    for q in QueueServer.objects.order_by("server_id"):
        own = crawl_counters(q.counters, crawl.pk)
        mine = own is not None
        counters = own or {}
        if mine:
            for host, count in (counters.get("error_hosts") or {}).items():
                error_hosts[host] = error_hosts.get(host, 0) + int(count)
            working.append(counters)
            for tier, count in (counters.get("tiers") or {}).items():
                tiers[str(tier)] = tiers.get(str(tier), 0) + int(count)
        servers.append({
            "server": q.server_id, "url": q.base_url, "state": q.state,
            "seconds_since_heartbeat": (None if q.last_heartbeat is None
                                        else round((now - q.last_heartbeat).total_seconds(), 1)),
            "working_on_this_crawl": mine,
            "queued": int(counters.get("queued", 0)) if mine else 0,
            "waiting_robots": int(counters.get("waiting_robots", 0)) if mine else 0,
            "crawl_delayed": int(counters.get("crawl_delayed", 0)) if mine else 0,
            "outstanding_schedules": int(counters.get("outstanding_schedules", 0)) if mine else 0,
            "inbox": int(counters.get("inbox", 0)) if mine else 0,
            "disk": _disk_reason(q.counters),
        })
    counters = {name: getattr(crawl, name) for name in (
        "pages_fetched", "urls_seen", "urls_queued", "documents_indexed", "fetch_errors",
        "bytes_downloaded", "hosts_seen")}
    top_errors = sorted(error_hosts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    robots = robots_failures.RobotsFailures.from_json(crawl.robots_failures)
    rate, window = crawl_page.rate_now(crawl, now)
    return {
        "crawl": crawl.pk, "name": crawl.name, "timestamp": crawl.timestamp,
        "series": crawl_rate_series(crawl),
        "chart": crawl_page.chart(crawl),
        # pages per second over the last RATE_WINDOW seconds (rate_window: the seconds used,
        # shorter while the crawl is younger)
        "rate_now": rate, "rate_window": window, "rate_window_wanted": crawl_page.RATE_WINDOW,
        **crawl_page.errors_report(crawl),
        "error_hosts": [[host, count] for host, count in top_errors],
        # host errors are known only while a queue server works on the crawl
        "reporting": any(row["working_on_this_crawl"] for row in servers),
        "robots_fetches": robots.fetches,
        "robots_failures": robots_failures.rows(crawl.robots_failures),
        "end_reason": crawl.end_reason,
        "status": crawl.status, "status_label": crawl.get_status_display(),
        # the channel of an active crawl (several run at once, one per channel), else None
        "channel": crawl.channel,
        "elapsed": round(elapsed, 1),
        "pages_per_second": round(crawl.pages_fetched / elapsed, 2) if elapsed else 0.0,
        "counters": counters,
        "tiers": dict(sorted(tiers.items(), key=lambda kv: int(kv[0]))),
        "queue_servers": servers,
        "disk_pauses": crawl_disk_pauses(crawl),
        # in its sleep window (crawler.core.definition.sleep): a queue server working on it
        # says so in its heartbeat
        "asleep": crawl.is_active and any(q.get("asleep") for q in working),
        "sleep_window": crawl.sleep_window,
        # ages of the indexed copies and what their last visits found (issue 21)
        "freshness": crawl_page.freshness(crawl, now),
        "archive": crawl_page.archive_report(crawl, working),
    }


def crawl_rate_series(crawl: Crawl, points: int = 120) -> list[list[float]]:
    """[[seconds since start, pages per second], ...] between consecutive samples."""
    samples = list(crawl.samples.order_by("-at")[: points + 1].values_list("at",
                                                                           "pages_fetched"))
    samples.reverse()
    start = crawl.started_at or (samples[0][0] if samples else None)
    series = []
    for (t0, p0), (t1, p1) in zip(samples, samples[1:], strict=False):
        dt = (t1 - t0).total_seconds()
        if dt > 0 and start is not None:
            series.append([round((t1 - start).total_seconds(), 1), round((p1 - p0) / dt, 2)])
    return series


@dataclass(frozen=True, slots=True)
class MachineRow:
    """One process of the Machines page: a queue server or one fetcher process. ``state``
    is what it reported, or "gone" once it has been silent for ``GONE_AFTER_BEATS`` of its
    heartbeats; ``schedule`` the schedule a fetcher runs (or ran last, when idle)."""

    kind: str
    name: str
    state: str
    seconds_since: float | None
    detail: str
    schedule: str = ""
    pages: int | None = None
    rate: float | None = None

    def as_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "state": self.state,
                "seconds_since": self.seconds_since, "detail": self.detail,
                "schedule": self.schedule, "pages": self.pages, "rate": self.rate}


def machines_list() -> list[MachineRow]:
    """Queue servers, then one row per fetcher process, with the time since each reported."""
    now = timezone.now()
    gone_after = GONE_AFTER_BEATS * settings.FETCHER_HEARTBEAT_SECONDS

    def since(moment) -> float | None:
        return None if moment is None else round((now - moment).total_seconds(), 1)

    def detail(counters: dict | None) -> str:
        crawls = reported_crawls(counters)
        text = "; ".join(f"crawl {c}, queued {(crawl_counters(counters, c) or {}).get('queued', 0)}"
                         for c in crawls) if crawls else "idle"
        reason = _disk_reason(counters)
        return f"{text}; {reason}" if reason else text

    rows = [MachineRow("queue server", f"{q.server_id} ({q.base_url})", q.state,
                       since(q.last_heartbeat), detail(q.counters))
            for q in QueueServer.objects.order_by("server_id")]
    for f in Fetcher.objects.all():
        age = since(f.last_heartbeat)
        state = "gone" if f.state != "stopped" and age is not None and age > gone_after \
            else f.state
        rows.append(MachineRow("fetcher", f.name, state, age,
                               f"{f.schedules_done} schedules, {f.pages_fetched} pages",
                               schedule=f.last_schedule, pages=f.pages_fetched,
                               rate=0.0 if state != "fetching" and state != "idle"
                               else f.pages_per_second))
    return rows


# --- crawls by timestamp, for search -----------------------------------------------------


def crawl_names_get(timestamps: list[int]) -> dict[int, str]:
    """The names of the crawls with these timestamps (those that exist)."""
    return dict(Crawl.objects.filter(timestamp__in=timestamps).values_list("timestamp", "name"))


def crawl_pages_count(timestamps: tuple[int, ...]) -> int:
    """Documents indexed by the crawls with these timestamps, as their counters say."""
    return sum(Crawl.objects.filter(timestamp__in=timestamps)
               .values_list("documents_indexed", flat=True))


@dataclass(frozen=True, slots=True)
class BuiltinScraperRow:
    """A built-in scraper as the Scrapers page lists it: its definition, the profiles that
    turn it off, and the profiles where an admin scraper replaces it (with that scraper)."""

    config: ScraperConfig
    turned_off_in: tuple[str, ...]
    replaced_in: tuple[tuple[str, str], ...]  # (profile, the admin scraper that replaces it)


def builtin_scrapers_list() -> list[BuiltinScraperRow]:
    """Every built-in scraper and where it is not used."""
    profiles = [(p.name, p.disabled_builtin_scrapers or [],
                 [ScraperConfig(s.name, s.signature) for s in p.scrapers.all()])
                for p in PageOptions.objects.prefetch_related("scrapers").order_by("name")]
    rows = []
    for builtin in BUILTIN_SCRAPERS:
        off = tuple(name for name, disabled, _ in profiles
                    if builtin.name.casefold() in {d.casefold() for d in disabled})
        replaced = tuple((name, by) for name, _, own in profiles
                         if (by := overridden_by(builtin, own)) is not None)
        rows.append(BuiltinScraperRow(builtin, off, replaced))
    return rows
