"""Value objects that cross the crawl queue's boundary: what fetchers report (discovered urls)
and what the queue hands out (schedules), plus the admin's counters.

Layer: ``crawler.core.scheduler``. All frozen and slotted; the queue never keeps references to
caller objects beyond the call.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class DiscoveredUrl:
    """A url a fetcher found, with what the seed's formulas need.

    * ``link_index`` is ``i``: the link's rank on its page after the fetcher sorted the links by
      importance (0 = best). It becomes the url's *weight*.
    * ``source_url``/``source_cld`` name the linking page (``source_cld`` is derived from
      ``source_url`` when empty); ``source_weight`` is that page's own weight ``w`` and
      ``source_tier`` the tier ``t`` it was scheduled in — both are echoed from the
      :class:`ScheduleEntry` the page came from. Seeds have no source.
    * ``is_html`` is the fetcher's guess from the link (extension, tag); ``is_sitemap`` marks
      sitemap links. ``opic_cash`` is this link's share of the source page's cash (OPIC order).
    * ``policy``/``policy_depth``: the crawl policy the url inherits from the linking page and
      how many links it is from where that policy began (see :mod:`crawler.core.definition.policy`);
      ``anchor_text`` the link's anchor text (it describes the uncrawled page for needy-query
      matching, :mod:`crawler.core.definition.needy`).
    """

    url: str
    depth: int = 0
    link_index: int = 0
    source_url: str = ""
    source_cld: str = ""
    source_weight: float = 0.0
    source_tier: int = 0
    is_sitemap: bool = False
    is_html: bool = True
    opic_cash: float = 0.0
    policy: str = "default"
    policy_depth: int = 0
    anchor_text: str = ""


@dataclass(frozen=True, slots=True)
class ScheduleEntry:
    """One url of a schedule.

    ``slot`` is the url's position in the schedule (0-based); a fetcher that downloads
    ``round_size`` urls per round batches by ``slot // round_size`` (see
    :meth:`Schedule.rounds`). ``crawl_delay`` > 0 marks a crawl-delayed host's url: the fetcher
    requests such a host's urls one at a time, ``crawl_delay`` seconds apart, whatever their
    slots. ``weight`` is the url's link weight (host budgeting and
    breadth-first) or its OPIC cash; ``etag`` and ``last_modified`` are set for a conditional
    re-fetch (a page recrawl, :mod:`.revisits`), with ``text_hash``, the hex text hash of the
    copy in the index: the fetcher re-indexes the page only when its text hash differs.
    ``policy`` and ``policy_depth`` are the crawl policy the url was queued under; the fetcher
    passes them on to the links it finds (:func:`crawler.core.definition.policy.child_policy`).
    """

    url: str
    depth: int
    weight: float
    tier: int
    crawl_delay: float
    etag: str | None
    slot: int
    policy: str = "default"
    policy_depth: int = 0
    last_modified: str | None = None
    text_hash: str | None = None

    @property
    def is_robots(self) -> bool:
        return self.url.endswith("/robots.txt") and self.url.count("/") == 3


@dataclass(frozen=True, slots=True)
class Schedule:
    """A list of urls handed to one fetcher. ``id`` is what :meth:`CrawlQueue.acknowledge`
    takes; a re-issued schedule (after a timeout) keeps its id and entries."""

    id: str
    entries: tuple[ScheduleEntry, ...]
    issued_at: float
    deadline: float
    round_size: int
    reissue: int = 0

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def urls(self) -> list[str]:
        return [entry.url for entry in self.entries]

    def rounds(self) -> list[tuple[ScheduleEntry, ...]]:
        """Entries grouped by ``slot // round_size``: each group is one fetch round."""
        groups: dict[int, list[ScheduleEntry]] = {}
        for entry in self.entries:
            groups.setdefault(entry.slot // self.round_size, []).append(entry)
        return [tuple(groups[key]) for key in sorted(groups)]


@dataclass(frozen=True, slots=True)
class QueueStats:
    """Counters for the admin's crawl page (``tiers`` is ``((tier, queued urls), ...)``)."""

    tiers: tuple[tuple[int, int], ...]
    robots_txt_queued: int
    waiting_robots: int
    waiting_hosts: int
    crawl_delayed: int
    delayed_hosts: int
    seen: int
    scheduled: int
    outstanding_schedules: int
    acknowledged_schedules: int
    hosts: int
    company_level_domains: int
    dropped: tuple[tuple[str, int], ...] = field(default_factory=tuple)
    needy_queries: int = 0      # needy queries the queue scores urls against
    needy_queued: int = 0       # urls in the needy lane (need score > 0)
    # the needy lane's best urls: (url, priority, need score, the needy queries it matched)
    needy_top: tuple[tuple[str, float, float, tuple[str, ...]], ...] = field(
        default_factory=tuple)

    @property
    def queued(self) -> int:
        return (sum(count for _, count in self.tiers) + self.robots_txt_queued
                + self.needy_queued)

    def as_dict(self) -> dict[str, object]:
        return {
            "tiers": {str(tier): count for tier, count in self.tiers},
            "queued": self.queued,
            "robots_txt_queued": self.robots_txt_queued,
            "waiting_robots": self.waiting_robots,
            "waiting_hosts": self.waiting_hosts,
            "crawl_delayed": self.crawl_delayed,
            "delayed_hosts": self.delayed_hosts,
            "seen": self.seen,
            "scheduled": self.scheduled,
            "outstanding_schedules": self.outstanding_schedules,
            "acknowledged_schedules": self.acknowledged_schedules,
            "hosts": self.hosts,
            "company_level_domains": self.company_level_domains,
            "dropped": dict(self.dropped),
            "needy_queries": self.needy_queries,
            "needy_queued": self.needy_queued,
            "needy_top": [{"url": url, "priority": round(priority, 4), "need": need,
                           "queries": list(queries)}
                          for url, priority, need, queries in self.needy_top],
        }
