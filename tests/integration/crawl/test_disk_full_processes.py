"""A crawl through the real processes (queue server, its Celery inbox worker, two fetchers, a
real Redis) on a small real filesystem: a tmpfs mounted as the WORK_DIRECTORY. While the
fetchers hold their schedules (the fixture site holds its pages back), a filler file takes the
filesystem's last byte. The queue server pauses and says why in the admin; the fetchers finish
what they hold, and the inbox worker, which cannot store their batches, leaves them in the
broker. When the filler is deleted the crawl resumes by itself and ends with every page of the
site in the index, each fetched once (nothing acknowledged was lost), and no temporary file."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.runtime.workdir import crawl_paths
from indexer.core.text import TextAnalyzer
from tests.fixtures.sites import FixtureServer, normal_site
from tests.fixtures.small_fs import MB, Filler, leftover_temporaries, small_filesystem
from tests.integration.crawl.test_processes import Engine, start_crawl

pytestmark = [pytest.mark.redis, pytest.mark.slow]


def gated(route, gate: threading.Event):
    """The site's route, with its /page/ answers held back until ``gate`` is set."""
    def answer(request):
        if request.path.startswith("/page/"):
            while not gate.wait(0.05) and not request.stopped.is_set():
                pass
        return route(request)
    return answer


def wait_for(what, check, timeout=30.0, logs=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"{what}: not seen in {timeout} s\n{logs() if logs else ''}")


class Rows:
    """The engine's database, read directly (faster than a manage.py shell per look)."""

    def __init__(self, path) -> None:
        self.path = path

    def one(self, sql: str):
        with sqlite3.connect(self.path, timeout=10) as db:
            return db.execute(sql).fetchone()

    def queue_server(self) -> dict:
        row = self.one("SELECT counters FROM crawler_queueserver WHERE server_id = 0")
        return json.loads(row[0]) if row else {}

    def crawl_status(self) -> str:
        return self.one("SELECT status FROM crawler_crawl")[0]


ADMIN_PAGES = """
    import json
    from django.contrib.auth.models import User
    from django.test import Client
    from django.urls import reverse
    from crawler.models import Crawl
    crawl = Crawl.objects.get()
    user = User.objects.create_superuser("disk-admin", "a@example.com", "pw-disk-full-9")
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    page = client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    listing = client.get(reverse("admin:crawler_crawl_changelist"))
    status = client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk]))
    print(json.dumps({"page": page.content.decode(), "list": listing.content.decode(),
                      "pauses": status.json()["disk_pauses"]}))
"""


@pytest.mark.long
def test_a_full_disk_pauses_the_crawl_and_loses_nothing(tmp_path, redis_url):
    site = normal_site("diskfull", pages=12, crawl_delay=0.0)
    gate = threading.Event()
    with small_filesystem(tmp_path / "work", 48) as work, \
            FixtureServer(gated(site.route, gate)) as server:
        engine = Engine(tmp_path, redis_url)
        engine.env.update({
            "WORK_DIRECTORY": str(work), "DISK_PAUSE_FREE_BYTES": str(12 * MB),
            "DISK_RESUME_FREE_BYTES": str(16 * MB), "INBOX_RETRY_SECONDS": "1",
            "QUEUE_SERVER_MAX_SCHEDULES": "2", "DOWNLOAD_SIZE_INTERVAL": "3",
            # held pages are not given up on, nor their schedules handed out again
            "CRAWLER_PAGE_DEADLINE": "60", "CRAWLER_READ_TIMEOUT": "60",
            "SCHEDULE_TIMEOUT": "120",
        })
        rows = Rows(tmp_path / "db.sqlite3")
        filler = Filler(work / "filler")

        def logs():
            return "\n".join(f"--- {n}\n" + (tmp_path / f"{n}.log").read_text()[-3000:]
                             for n in ("qs", "inbox", "fetch-a")
                             if (tmp_path / f"{n}.log").exists())

        try:
            engine.celery("inbox", "qs.0")
            engine.celery("fetch-a", "fetch")
            engine.celery("fetch-b", "fetch")
            engine.queue_server()
            timestamp = start_crawl(engine, [server.url("/")])
            wait_for("a fetcher holding pages", lambda: server.requests_for("/page/"),
                     logs=logs)
            filler.fill()  # the filesystem's last byte is taken
            disk = wait_for("the pause in the heartbeat",
                            lambda: rows.queue_server().get("disk", {}).get("paused")
                            and rows.queue_server()["disk"], logs=logs)
            reason = disk["reason"]
            assert reason.startswith(f"paused: disk {'full' if disk['cause'] == 'full' else 'nearly full'}, ")
            assert f"MB free on {work / 'qs0'}; resumes above 16 MB" in reason
            shown = json.loads(engine.django(ADMIN_PAGES))
            assert shown["pauses"] and all("paused: disk" in p for p in shown["pauses"])
            assert "paused: disk" in shown["page"] and "paused: disk" in shown["list"]

            gate.set()  # the fetchers finish what they hold; the inbox cannot store it
            wait_for("a batch kept in the broker",
                     lambda: "kept in the broker" in (tmp_path / "inbox.log").read_text(),
                     logs=logs)
            held = {e.path for e in server.log}
            assert engine.procs["qs"].poll() is None, logs()  # no crash
            assert rows.crawl_status() == "running"

            filler.remove()  # space returns: the crawl resumes by itself and finishes
            wait_for("the end of the crawl", lambda: rows.crawl_status() == "stopped",
                     timeout=60, logs=logs)
            assert not rows.queue_server()["disk"]["paused"]
        finally:
            gate.set()
            engine.stop_all()
            filler.remove()
        index = crawl_paths(work / "qs0", timestamp)["index"]
        analyzer = TextAnalyzer()
        with IndexBundleReader(index) as reader:
            for page in site.pages.values():
                (term,) = analyzer.query_terms(page.word, "en")
                assert (reader.term_stats(term).docs >= 1) == page.allowed, page.path
        fetched = [e.path for e in server.log if e.path in site.pages]
        # the pages fetched while the disk was full were not fetched again: their batches
        # waited in the broker
        assert all(fetched.count(path) == 1 for path in held & set(site.pages)), fetched
        assert leftover_temporaries(work) == []
        inbox = crawl_paths(work / "qs0", timestamp)["inbox"] / "batch"
        assert list(inbox.glob("*")) == []
