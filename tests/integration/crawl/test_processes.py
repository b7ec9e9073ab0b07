"""The crawl with real processes: a queue server (`manage.py run_queue_server`), its inbox worker
(Celery on qs.0) and two Celery fetcher workers on a real Redis, against fixture sites. The crawl
is started and watched through the services, as the admin's Start button does it. Also: a fetcher
killed with -9 in the middle of a schedule, and a queue server killed while indexing, still end
with the same set of indexed urls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import redis

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.runtime.workdir import crawl_paths
from indexer.core.text import TextAnalyzer
from tests.conftest import ROOT, migrated_sqlite_template, sqlite_copy
from tests.fixtures.sites import FixtureServer, hostile_router, normal_site
from tests.integration.crawl.test_core_crawl import indexed_urls

pytestmark = [pytest.mark.redis, pytest.mark.slow]


class Engine:
    """The crawl processes of one machine, on a private SQLite file and work directory."""

    def __init__(self, tmp_path, redis_url):
        self.tmp = tmp_path
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL",)}
        self.env.update({
            "DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "REDIS_URL": redis_url,
            "VAR_DIRECTORY": str(tmp_path / "var"),
            "CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8", "NUM_QUEUE_SERVERS": "1",
            "INDEX_REFRESH_SECONDS": "1", "SCHEDULE_TIMEOUT": "8",
            "DOWNLOAD_SIZE_INTERVAL": "6", "CRAWLER_PAGE_DEADLINE": "5",
            "QUEUE_SERVER_TOKEN": "test-token", "PYTHONUNBUFFERED": "1",
        })
        self.procs: dict[str, subprocess.Popen] = {}
        # a fresh machine's broker: the broker is shared by the whole test session, and tasks
        # an earlier test left queued (a periodic link analysis of its crawl 1, say) would
        # otherwise run against this test's crawl 1 at a moment of their choosing
        redis.Redis.from_url(redis_url).flushdb()
        self.env["DATABASE_URL"] = sqlite_copy(migrated_sqlite_template(), tmp_path)

    def manage(self, *args):
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def django(self, code):
        return self.manage("shell", "-v", "0", "-c", textwrap.dedent(code))

    def start(self, name, argv):
        log = open(self.tmp / f"{name}.log", "a")
        self.procs[name] = subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def celery(self, name, queues, concurrency=1):
        self.start(name, [sys.executable, "-m", "celery", "-A", "searchsite", "worker", "-Q",
                          queues, "-c", str(concurrency), "-n", f"{name}-{os.getpid()}@%h",
                          "--without-gossip", "--without-mingle", "--loglevel", "INFO"])

    def analysis_worker(self, name="analysis"):
        """The `analysis` Celery worker as `manage.py up` starts it: one process, fresh for each
        run (link analysis, crawler.link_analysis)."""
        self.start(name, [sys.executable, "-m", "celery", "-A", "searchsite", "worker", "-Q",
                          "analysis", "-c", "1", "--max-tasks-per-child", "1",
                          "-n", f"{name}-{os.getpid()}@%h", "--without-gossip",
                          "--without-mingle"])

    def queue_server(self):
        self.start("qs", [sys.executable, "manage.py", "run_queue_server", "--server", "0"])

    def kill(self, name, sig=signal.SIGKILL):
        proc = self.procs.pop(name)
        os.killpg(proc.pid, sig)
        proc.wait(timeout=30)

    def stop_all(self):
        for name in list(self.procs):
            proc = self.procs.pop(name)
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def status(self):
        out = self.django("from crawler.models import Crawl; c = Crawl.objects.get(); "
                          "print(c.status, c.pages_fetched, c.documents_indexed)")
        status, pages, docs = out.split()
        return status, int(pages), int(docs)

    def wait_status(self, wanted, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.status()
            if status[0] == wanted:
                return status
            time.sleep(1)
        logs = "\n".join((self.tmp / f"{n}.log").read_text()[-3000:]
                         for n in ("qs", "fetch-a", "inbox") if (self.tmp / f"{n}.log").exists())
        pytest.fail(f"crawl still {self.status()} after {timeout}s\n{logs}")


def start_crawl(engine, seeds, max_depth=-1):
    seed_text = "\\n".join(seeds)
    engine.django(f"""
        from crawler import services
        from crawler.models import Crawl
        crawl = Crawl.objects.create(name="e2e", page_options=services.page_options_default_get(),
                                     max_depth={max_depth})
        services.seed_sites_add_bulk(crawl.pk, "{seed_text}")
        services.crawl_start(crawl.pk)
        print(crawl.timestamp)
    """)
    return int(engine.django("from crawler.models import Crawl; print(Crawl.objects.get().timestamp)"))


def index_of(engine, timestamp):
    return IndexBundleReader(crawl_paths(engine.tmp / "var" / "work" / "qs0", timestamp)["index"])


def run(tmp_path, redis_url, sites, disturb=None, extra_seeds=(), max_depth=-1):
    engine = Engine(tmp_path, redis_url)
    try:
        engine.celery("inbox", "qs.0")
        engine.celery("fetch-a", "fetch")
        engine.celery("fetch-b", "fetch")
        engine.queue_server()
        timestamp = start_crawl(engine, [server.url("/") for _, server in sites]
                                + list(extra_seeds), max_depth)
        if disturb:
            disturb(engine)
        engine.wait_status("stopped", timeout=150)
        reader = index_of(engine, timestamp)
        return engine, reader
    finally:
        engine.stop_all()


def test_crawl_through_real_processes(tmp_path, redis_url):
    site_a, site_b = normal_site("gamma", pages=8, crawl_delay=0.0), \
        normal_site("delta", pages=5, crawl_delay=0.5)
    with FixtureServer(site_a.route) as a, FixtureServer(site_b.route) as b, \
            FixtureServer(hostile_router()) as h:
        hostile = [h.url(p) for p in (
            "/trap/1", "/trickle?interval=1&size=100", "/endless-headers?interval=0",
            "/big?mb=50", "/gzip-bomb?gb=5", "/redirect/loop/a", "/status/500", "/status/404",
            "/redirect/chain/3")]
        started = time.monotonic()
        engine, reader = run(tmp_path, redis_url, [(site_a, a), (site_b, b)],
                             extra_seeds=hostile, max_depth=4)
        assert time.monotonic() - started < 120
        trap = [e.path for e in h.log if e.path.startswith("/trap/")]
        assert trap and max(p.count("/") - 1 for p in trap) <= 1 + 4
        slow = [e for e in h.log if e.path.startswith(("/trickle", "/endless"))]
        assert slow
        too_long = [(e.path, round(e.end - e.start, 2)) for e in slow if e.end
                    and e.end - e.start >= 5 + 2]
        assert not too_long, too_long
        analyzer = TextAnalyzer()
        for site in (site_a, site_b):
            for page in site.pages.values():
                (term,) = analyzer.query_terms(page.word, "en")
                assert (reader.term_stats(term).docs >= 1) == page.allowed, page.path
        assert a.requests_for("/private/") == [] and b.requests_for("/private/") == []
        delayed = [e.start for e in b.log if e.path != "/robots.txt"]
        assert min(y - x for x, y in zip(delayed, delayed[1:], strict=False)) >= 0.5 - 0.02
        status, pages, docs = engine.status()
        assert status == "stopped" and pages >= 13 and docs >= pages
        feeds = engine.django("""
            from crawler.models import CrawlSample, Fetcher
            print(CrawlSample.objects.count(), Fetcher.objects.count(),
                  sum(f.schedules_done for f in Fetcher.objects.all()))
        """).split()
        samples, fetchers, schedules = map(int, feeds)
        assert samples >= 1 and fetchers >= 1 and schedules >= 1
        # the hostile servers' timeouts and 500s are counted per host for the dashboard
        timestamp = int(engine.django("from crawler.models import Crawl; "
                                      "print(Crawl.objects.get().timestamp)"))
        state = crawl_paths(engine.tmp / "var" / "work" / "qs0", timestamp)["state"]
        assert sum(json.loads(state.read_text())["error_hosts"].values()) >= 1


@pytest.mark.long
def test_killed_fetcher_and_queue_server_lose_nothing(tmp_path, redis_url):
    sites = [normal_site(name, pages=10, crawl_delay=0.0) for name in ("eps", "zeta")]
    servers = [FixtureServer(site.route).start() for site in sites]
    try:
        _, calm = run(tmp_path / "calm", redis_url, list(zip(sites, servers, strict=True)))
        expected = indexed_urls([calm])

        def disturb(engine):
            time.sleep(2.5)
            engine.kill("fetch-a")             # in the middle of a schedule
            engine.celery("fetch-a", "fetch")
            time.sleep(1.5)
            engine.kill("qs")                  # in the middle of indexing
            engine.queue_server()

        for server in servers:
            server.clear_log()
        _, disturbed = run(tmp_path / "disturbed", redis_url,
                           list(zip(sites, servers, strict=True)), disturb)
        assert indexed_urls([disturbed]) == expected
        assert len(expected) >= 20
    finally:
        for server in servers:
            server.stop()
