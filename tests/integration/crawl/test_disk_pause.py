"""The queue-server process on a small real filesystem (a tmpfs, filled by a filler file): below
the low-water mark it hands out no new schedules and says why in its heartbeat, the crawl's
admin page and the crawl list; it resumes by itself above the high-water mark and not in
between; and a write that finds the disk full shuts the crawl without losing the batch, and
opens it again when space returns."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from crawler import services
from crawler.core.queue_server.disk_space import MB, DiskGuard, Watermarks
from crawler.core.queue_server.heartbeat import crawl_counters, saved_crawls
from crawler.core.transport.spool import Spool
from crawler.machines.queue_server import QueueServerProcess
from crawler.models import Crawl, QueueServer, SeedSite
from indexer.core.runtime.workdir import crawl_paths
from tests.fixtures.sites import unique_word
from tests.fixtures.small_fs import Filler, leftover_temporaries, small_filesystem
from tests.integration.crawl.test_disk_full_core import SITE, docs_with, page_docs

pytestmark = pytest.mark.django_db


def running_crawl() -> Crawl:
    crawl = Crawl.objects.create(name="disk", page_options=services.page_options_default_get())
    SeedSite.objects.create(crawl=crawl, url=SITE + "/")
    services.crawl_start(crawl.pk)
    crawl.refresh_from_db()
    return crawl


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def batch(crawl: Crawl, **fields) -> bytes:
    data = {"crawl": crawl.timestamp, "server": 0, "schedule": None, "done": False, "docs": [],
            "discovered": [], "robots": [], "host_errors": {}, "fetched": [], "counters": {}}
    data.update(fields)
    return json.dumps(data).encode()


def heartbeat(process: QueueServerProcess) -> dict:
    process._heartbeat(force=True)
    return QueueServer.objects.get(server_id=0).counters


def shown(admin_client, crawl: Crawl) -> tuple[str, str, list[str]]:
    """The crawl's status page, the crawl list, and the status JSON's disk pauses."""
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    listing = admin_client.get(reverse("admin:crawler_crawl_changelist"))
    data = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk])).json()
    return page.content.decode(), listing.content.decode(), data["disk_pauses"]


def test_the_queue_server_pauses_for_disk_space_and_resumes(settings, tmp_path,
                                                             admin_client) -> None:
    with small_filesystem(tmp_path / "work", 48) as work:
        settings.WORK_DIRECTORY = work
        clock = Clock()
        guard = DiskGuard(Watermarks(10 * MB, 14 * MB), work / "qs0", clock=clock,
                          interval=0.0, min_full_seconds=1.0)
        sent: list[dict] = []
        process = QueueServerProcess(0, 1, "http://127.0.0.1:9/", sent.append, disk=guard)
        crawl = running_crawl()
        filler = Filler(work / "filler")
        inbox = Spool(crawl_paths(work / "qs0", crawl.timestamp)["inbox"])
        try:
            process.tick()
            (robots,) = sent  # robots.txt first
            inbox.put("batch", batch(crawl, schedule=robots["id"], done=True,
                                     robots=[{"origin": SITE, "status": 404, "body": None}]))
            filler.leave_free(8 * MB)
            process.tick()
            assert inbox.pending("batch") == 0  # batches are still applied while paused
            assert len(sent) == 1  # but no new schedule goes out
            counters = heartbeat(process)
            reason = counters["disk"]["reason"]
            assert reason == (f"paused: disk nearly full, 8.0 MB free on {work / 'qs0'}; "
                              f"resumes above 14 MB")
            page, listing, pauses = shown(admin_client, crawl)
            assert reason in page and reason in listing
            assert pauses == [f"queue server 0 {reason}"]

            filler.leave_free(12 * MB)  # between the marks: still paused
            process.tick()
            assert len(sent) == 1 and heartbeat(process)["disk"]["paused"]
            filler.leave_free(20 * MB)  # above the high-water mark: resumes by itself
            process.tick()
            assert len(sent) == 2 and [e[0] for e in sent[1]["entries"]] == [SITE + "/"]
            counters = heartbeat(process)
            assert not counters["disk"]["paused"] and counters["disk"]["reason"] == ""
            page, listing, pauses = shown(admin_client, crawl)
            assert "paused: disk" not in listing and pauses == []

            # a write that finds the disk full: the crawl is shut, the batch kept
            words = [unique_word("pause", i) for i in range(3)]
            inbox.put("batch", batch(crawl, schedule=sent[1]["id"], done=True,
                                     docs=page_docs(words), counters={"pages_fetched": 3}))
            filler.fill()
            process.tick()
            assert process.core_of(crawl.pk) is None and inbox.pending("batch") == 1
            assert leftover_temporaries(work) == []
            counters = heartbeat(process)
            assert crawl_counters(counters, crawl.pk)["idle"] is False
            assert counters["disk"]["reason"].startswith(
                f"paused: disk full, 0.0 MB free on {work / 'qs0'}")
            assert shown(admin_client, crawl)[2] == [f"queue server 0 {counters['disk']['reason']}"]
            clock.now += 5.0
            process.tick()  # still full: it waits, it does not try (nor crash) again
            assert process.core_of(crawl.pk) is None

            filler.remove()
            clock.now += 5.0
            process.tick()  # space is back: opened again, and the kept batch applied
            assert process.core_of(crawl.pk) is not None and inbox.pending("batch") == 0
            counters = heartbeat(process)
            assert crawl_counters(counters, crawl.pk)["pages_fetched"] == 3
            assert not counters["disk"]["paused"]
            assert Crawl.objects.get(pk=crawl.pk).pages_fetched == 3
            assert shown(admin_client, crawl)[2] == []
        finally:
            filler.remove()
            process._close()
        index = crawl_paths(work / "qs0", crawl.timestamp)["index"]
        assert all(docs_with(index, word) == 1 for word in words)
        assert leftover_temporaries(work) == []


def test_a_crawl_is_not_opened_on_a_disk_below_the_mark(settings, tmp_path) -> None:
    with small_filesystem(tmp_path / "work", 48) as work:
        settings.WORK_DIRECTORY = work
        guard = DiskGuard(Watermarks(30 * MB, 40 * MB), work / "qs0", interval=0.0)
        sent: list[dict] = []
        process = QueueServerProcess(0, 1, "http://127.0.0.1:9/", sent.append, disk=guard)
        crawl = running_crawl()
        filler = Filler(work / "filler")
        filler.leave_free(20 * MB)
        try:
            process.tick()
            assert process.core_of(crawl.pk) is None and sent == []
            counters = heartbeat(process)
            assert crawl_counters(counters, crawl.pk) is not None
            assert counters["disk"]["cause"] == "low"
            services.crawl_stop(crawl.pk, analyse=False)
            process.tick()  # nothing was opened: nothing to save
            assert saved_crawls(heartbeat(process)) == {crawl.pk}
            filler.remove()
        finally:
            filler.remove()
            process._close()
