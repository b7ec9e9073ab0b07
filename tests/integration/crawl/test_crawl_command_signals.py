"""`manage.py crawl` in a real process, stopped by SIGTERM (a service manager, `kill`): it
stops the crawl the way the admin's Stop does (queues and index saved, the crawl resumable, not
locked as running) and exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.conftest import ROOT, sqlite_copy
from tests.fixtures.sites import FixtureServer, normal_site

pytestmark = pytest.mark.slow


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_sigterm_stops_the_crawl_resumable_and_exits(tmp_path, migrated_sqlite):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update({
        "DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "PYTHONUNBUFFERED": "1",
        "VAR_DIRECTORY": str(tmp_path / "var"),
        "DATABASE_URL": sqlite_copy(migrated_sqlite, tmp_path),
        "CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8", "INDEX_REFRESH_SECONDS": "1",
    })
    site = normal_site("sigma", pages=24, crawl_delay=0.3)  # 26 pages: 7 s at least
    stdout, stderr = tmp_path / "out.log", tmp_path / "err.log"
    with FixtureServer(site.route) as server, open(stdout, "w") as o, open(stderr, "w") as e:
        crawl = subprocess.Popen(
            [sys.executable, "manage.py", "crawl", server.url("/"), "--fetchers", "1"],
            cwd=ROOT, env=env, stdout=o, stderr=e)
        try:
            deadline = time.monotonic() + 60
            while not server.requests_for("/page/"):  # the crawl is under way
                assert crawl.poll() is None, stderr.read_text()
                assert time.monotonic() < deadline, "the crawl fetched nothing"
                time.sleep(0.05)
            crawl.send_signal(signal.SIGTERM)
            crawl.wait(timeout=60)
        finally:
            if crawl.poll() is None:
                crawl.kill()
                crawl.wait()
    out, err = stdout.read_text(), stderr.read_text()
    assert crawl.returncode == 0, out + err
    assert "SIGTERM: the crawl is saved (resumable); its link analysis did not run" in err
    assert "Crawl resumable:" in out
    assert "Link analysis" not in out  # exits without the long work after the save

    # the row says resumable, and the saved queue opens again with the urls left to fetch
    state = manage(env, "shell", "-v", "0", "-c", textwrap.dedent("""
        from django.conf import settings
        from crawler import services
        from crawler.core.queue_server.config import QueueServerConfig
        from crawler.core.queue_server.server import QueueServerCore
        from crawler.models import Crawl
        from crawler.selectors import crawl_config_get
        from indexer.core.runtime.workdir import queue_server_dir
        crawl = Crawl.objects.get()
        print(crawl.status, crawl.channel, crawl.pages_fetched)
        services.crawl_resume(crawl.pk)
        core = QueueServerCore(QueueServerConfig(
            0, 1, queue_server_dir(settings.WORK_DIRECTORY, 0), crawl_config_get(crawl.pk)))
        stats = core.stats()
        print(stats["queued"], stats["outstanding_schedules"], stats["pages_fetched"])
        core.close()
        print(Crawl.objects.get().status)
    """)).split()
    status, lock, pages, queued, outstanding, saved_pages, resumed = state
    assert (status, lock, resumed) == ("resumable", "None", "running")
    assert 1 <= int(pages) == int(saved_pages) < 26
    assert int(queued) + int(outstanding) > 0, state
