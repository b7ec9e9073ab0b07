"""Several crawls at once (issue 37, item 7; Yioop's channels), through the real processes: a
queue server (``manage.py run_queue_server``), its inbox worker and two Celery fetcher workers
on Redis, against three loopback sites. Crawl A (site alpha and a shared site) starts; crawl B
(site beta and the same shared site) starts while A runs, on the next channel. The queue server
is killed with -9 and started again while both run; A is stopped at once while B runs on and
ends by itself (every page of it indexed: the new queue server took it up from disk); A,
resumed, ends too. Each crawl's index holds its own sites'
pages and none of the other's, the search page with the index choice set to each crawl answers
only from that crawl, and the shared site, which has a Crawl-delay, was asked a delay apart
across the two crawls."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.runtime.workdir import crawl_paths
from indexer.core.text import TextAnalyzer
from tests.conftest import ROOT
from tests.fixtures.sites import FixtureServer, normal_site
from tests.integration.crawl.test_processes import Engine

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.long]

DELAY = 0.5  # the shared site's Crawl-delay


# One Django process of the engine's database that does what the test asks, a JSON line per
# request and answer: a `manage.py shell` per step starts Django again each time, which on a
# busy machine took longer than the crawls themselves.
DRIVER = """
import json, sys
import django
django.setup()
from django.test import Client
from crawler import services
from crawler.models import Crawl
from searchindex.services import search_index_use

def rows():
    return {c.name: [c.status, c.channel, c.pages_fetched] for c in Crawl.objects.order_by("pk")}

for line in sys.stdin:
    ask = json.loads(line)
    if ask["do"] == "create":
        crawl = Crawl.objects.create(name=ask["name"], restrict_to_seeds=True,
                                     page_options=services.page_options_default_get())
        services.seed_sites_add_bulk(crawl.pk, "\\n".join(ask["seeds"]))
        answer = crawl.timestamp
    elif ask["do"] == "rows":
        answer = rows()
    elif ask["do"] == "search":
        search_index_use("crawl", Crawl.objects.get(name=ask["name"]).pk)
        found = []
        for url, word in ask["words"].items():
            page = Client().get("/", {"q": word}, HTTP_HOST="127.0.0.1")
            assert page.status_code == 200, page.status_code
            if 'href="' + url + '"' in page.content.decode():
                found.append(url)
        answer = found
    else:
        getattr(services, "crawl_" + ask["do"])(Crawl.objects.get(name=ask["name"]).pk)
        answer = rows()
    print(json.dumps(answer), flush=True)
"""


class Driver:
    """The engine's database and services, asked from the test (see DRIVER)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.proc = subprocess.Popen([sys.executable, "-c", DRIVER], cwd=ROOT, env=engine.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, do: str, **fields):
        self.proc.stdin.write(json.dumps({"do": do, **fields}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the driver died asking {do}"
        return json.loads(line)

    def rows(self) -> dict[str, list]:
        """name -> [status, channel, pages fetched] of every crawl."""
        return self.ask("rows")

    def wait_for(self, what: str, check, timeout: float = 150.0) -> dict[str, list]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.rows()
            if check(rows):
                return rows
            time.sleep(0.3)
        logs = "\n".join((self.engine.tmp / f"{n}.log").read_text()[-3000:]
                         for n in ("qs", "fetch-a", "inbox")
                         if (self.engine.tmp / f"{n}.log").exists())
        pytest.fail(f"{what}: still {self.rows()} after {timeout}s\n{logs}")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def reachable(site, server) -> dict[str, str]:
    """url -> word of the site's pages a crawl of it reaches (its home and linked pages)."""
    return {server.url(path): page.word for path, page in site.pages.items()
            if page.allowed and (path == "/" or path.startswith("/page/"))}


def test_two_crawls_at_once_each_with_its_own_index(tmp_path, redis_url):
    alpha = normal_site("channel alpha", pages=24, crawl_delay=1.0)
    beta = normal_site("channel beta", pages=12, crawl_delay=1.0)
    shared = normal_site("channel shared", pages=5, crawl_delay=DELAY)
    analyzer = TextAnalyzer()
    with FixtureServer(alpha.route, host="127.0.0.1") as a, \
            FixtureServer(beta.route, host="127.0.0.2") as b, \
            FixtureServer(shared.route, host="127.0.0.3") as s:
        engine = Engine(tmp_path, redis_url)
        engine.env["MAX_ACTIVE_CRAWLS"] = "2"
        engine.env["SEARCH_OPTIONS_TTL"] = "0"  # each search reads the index choice anew
        driver = Driver(engine)
        try:
            engine.celery("inbox", "qs.0")
            engine.celery("fetch-a", "fetch")
            engine.celery("fetch-b", "fetch")
            engine.queue_server()
            stamp_a = driver.ask("create", name="A", seeds=[a.url("/"), s.url("/")])
            stamp_b = driver.ask("create", name="B", seeds=[b.url("/"), s.url("/")])
            driver.ask("start", name="A")
            driver.ask("start", name="B")  # while A runs, on the next channel
            rows = driver.wait_for("both fetch", lambda r: r["A"][2] >= 1 and r["B"][2] >= 1)
            assert rows["A"][:2] == ["running", 0] and rows["B"][:2] == ["running", 1]

            engine.kill("qs")  # -9 while both run: the new one takes both up from disk
            engine.queue_server()
            rows = driver.ask("stop", name="A")
            assert rows["A"][0] == "stopping" and rows["B"][0] == "running"  # B runs on
            rows = driver.wait_for("A saved", lambda r: r["A"][0] == "resumable")
            assert rows["A"][1] is None
            driver.wait_for("B ends by itself", lambda r: r["B"][0] == "stopped")
            driver.ask("resume", name="A")
            driver.wait_for("A ends by itself", lambda r: r["A"][0] == "stopped")

            own_a = {**reachable(alpha, a), **reachable(shared, s)}
            own_b = {**reachable(beta, b), **reachable(shared, s)}
            only_a, only_b = reachable(alpha, a), reachable(beta, b)
            work = engine.tmp / "var" / "work" / "qs0"
            for stamp, own, other in ((stamp_a, own_a, only_b), (stamp_b, own_b, only_a)):
                reader = IndexBundleReader(crawl_paths(work, stamp)["index"])
                for word in own.values():
                    (term,) = analyzer.query_terms(word, "en")
                    assert reader.term_stats(term).docs >= 1, (stamp, word)
                for word in other.values():
                    (term,) = analyzer.query_terms(word, "en")
                    assert reader.term_stats(term).docs == 0, (stamp, word)
            every = {**only_a, **only_b}
            assert set(driver.ask("search", name="A", words=every)) == set(only_a)
            assert set(driver.ask("search", name="B", words=every)) == set(only_b)
        finally:
            driver.close()
            engine.stop_all()
        # the shared site was asked by both crawls, a Crawl-delay apart across them
        asked = sorted(e.start for e in s.log if e.path != "/robots.txt")
        assert len(asked) >= 2 * len(reachable(shared, s))
        gaps = [round(y - x, 3) for x, y in zip(asked, asked[1:], strict=False)]
        assert min(gaps) >= DELAY - 0.02, gaps
        assert a.requests_for("/private/") == [] and b.requests_for("/private/") == []
