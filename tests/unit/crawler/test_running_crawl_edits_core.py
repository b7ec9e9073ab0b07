"""Changing a running crawl (issue 37, item 8) in the queue server and the fetcher, and the
parsers of its new options: a seed added while the crawl runs is queued by the queue server
that owns it, edited site rules are in force at once (the fetchers leave out queued urls the
new rules refuse), the sleep window stops schedules, and quotas and sleep windows parse with
clear errors."""

from __future__ import annotations

import dataclasses
import time

import pytest

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.definition.siterules import (
    SiteRuleError,
    SiteRules,
    parse_quotas,
    parse_site_rules,
    site_rule_errors,
)
from crawler.core.definition.sleep import SleepWindow, SleepWindowError
from crawler.core.fetcher.lanes import split_schedule
from crawler.core.fetcher.stats import ScheduleStats
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.scheduler import DiscoveredUrl, Schedule, ScheduleEntry
from crawler.core.transport.wire import discovered_to_wire

from .test_queue_server_stalls import put

A, B = "https://a.example", "https://b.example"
NOW = 1_700_000_000.0


def crawl_with(*seeds: str, **fields) -> CrawlConfig:
    return CrawlConfig(crawl_id=1, timestamp=1700000000, name="t",
                       seeds=tuple(SeedSpec(url) for url in seeds), **fields)


def test_quotas_parse_only_in_the_disallowed_sites() -> None:
    text = "domain:a.example#100\nb.example\nhttps://c.example/docs/ # 5"
    assert [r.source for r in parse_site_rules(text, quotas=True)] == ["b.example"]
    assert [(r.kind, r.value, n) for r, n in parse_quotas(text)] == [
        ("domain", "a.example", 100), ("prefix", "https://c.example/docs/", 5)]
    rules = SiteRules(quotas=parse_quotas(text))
    assert rules.quota_of("https://x.a.example/1", "x.a.example") == ("domain:a.example", 100)
    assert rules.quota_of("https://b.example/", "b.example") is None
    assert rules.permits("https://x.a.example/1")  # a quota is no ban
    with pytest.raises(SiteRuleError, match="belongs in the disallowed sites"):
        parse_site_rules("a.example#3")
    assert [str(e) for e in site_rule_errors("a.example#0\nb.example#x\nc.example#2",
                                             quotas=True)] == [
        "line 1: a quota must be a whole number of urls per hour from 1 to 10000000, not 0",
        "line 2: not a host, domain:, regex: or http(s):// rule"]


def test_sleep_windows_parse_wrap_midnight_and_say_what_is_wrong() -> None:
    night = SleepWindow.parse("22:00-06:00")
    assert str(night) == "22:00-06:00"
    assert night.asleep_at(23 * 60) and night.asleep_at(5 * 60 + 59)
    assert not night.asleep_at(6 * 60) and not night.asleep_at(12 * 60)
    day = SleepWindow.parse(" 8:30 - 20:00 ")
    assert day == SleepWindow(510, 1200) and day.asleep_at(600) and not day.asleep_at(1200)
    assert SleepWindow.parse("") is None and SleepWindow.parse("  ") is None
    for text, message in (("8-20", "HH:MM-HH:MM"), ("24:00-06:00", "not a time of day"),
                          ("10:00-10:00", "must differ"), ("10:61-11:00", "not a time")):
        with pytest.raises(SleepWindowError, match=message):
            SleepWindow.parse(text)


def test_a_seed_added_while_running_is_queued_and_edited_rules_hold(tmp_path) -> None:
    crawl = crawl_with(A + "/")
    core = QueueServerCore(QueueServerConfig(0, 1, tmp_path, crawl, schedule_size=50))
    try:
        core.add_seeds([A + "/"])
        put(core, robots=[{"origin": A, "status": 404, "body": None}])
        (first,) = core.take_schedules()
        assert A + "/" in [e.url for e in first.entries]
        assert core.update_crawl(crawl) == 0  # nothing changed
        edited = crawl_with(A + "/", B + "/new.html", site_rules=SiteRules(
            disallowed=parse_site_rules("https://a.example/private/")))
        assert core.update_crawl(edited) == 1  # the new seed, and only it
        assert core.config.crawl == edited
        assert core.queue.config.site_rules == edited.site_rules
        put(core, schedule=first.id, done=True, discovered=[
            discovered_to_wire(DiscoveredUrl(A + "/private/1", 1, 0)),
            discovered_to_wire(DiscoveredUrl(A + "/public/1", 1, 1))])
        assert ("site_rules", A + "/private/1") in core.queue.take_refused()
        (second,) = core.take_schedules()
        assert sorted(e.url for e in second.entries) == [A + "/public/1", B + "/robots.txt"]
        with pytest.raises(ValueError, match="not the open crawl"):
            core.update_crawl(dataclasses.replace(edited, timestamp=1))
    finally:
        core.close()


def _local_minute(when: float) -> int:
    local = time.localtime(when)
    return local.tm_hour * 60 + local.tm_min


def test_no_schedules_go_out_in_the_sleep_window(tmp_path) -> None:
    minute = _local_minute(NOW)
    asleep = SleepWindow(minute, (minute + 1) % 1440)
    crawl = crawl_with(A + "/", sleep=asleep)
    core = QueueServerCore(QueueServerConfig(0, 1, tmp_path, crawl, schedule_size=50),
                           clock=lambda: NOW)
    try:
        core.add_seeds([A + "/"])
        assert core.asleep() and core.take_schedules() == [] and core.stats()["asleep"]
        assert not core.settled()  # asleep with urls queued is not the end of the crawl
        awake = SleepWindow((minute + 1) % 1440, (minute + 2) % 1440)
        core.update_crawl(dataclasses.replace(crawl, sleep=awake))  # the window edited
        (robots,) = core.take_schedules()
        assert [e.url for e in robots.entries] == [A + "/robots.txt"]
    finally:
        core.close()


def test_the_fetcher_leaves_out_queued_urls_the_rules_now_refuse() -> None:
    entries = tuple(ScheduleEntry(url, 1, 1.0, 0, delay, None, slot)
                    for slot, (url, delay) in enumerate((
                        (A + "/robots.txt", 0.0), (A + "/ok", 0.0), (A + "/private/x", 0.0),
                        (B + "/slow", 2.0), (B + "/private/y", 2.0))))
    schedule = Schedule("s-1", entries, NOW, NOW + 60, 100)
    rules = SiteRules(disallowed=parse_site_rules("regex:/private/"))
    stats = ScheduleStats()
    rounds, delayed = split_schedule(schedule, frozenset(), stats, rules)
    assert [e.url for e in rounds[0]] == [A + "/robots.txt", A + "/ok"]
    assert [e.url for e in delayed] == [B + "/slow"] and stats.skipped == 2
    stats = ScheduleStats()
    rounds, delayed = split_schedule(schedule, frozenset(), stats, SiteRules())
    assert len(rounds[0]) + len(delayed) == 5 and stats.skipped == 0
