"""The engine's machines: what each role runs and the environment it is given (README "Running
on several machines" shows the same), and ``manage.py`` on a machine."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .procs import ROOT, Processes

WEB_PORT = 8000
PYTHON = sys.executable


@dataclass(frozen=True)
class Role:
    name: str
    what: str
    up_args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


ROLES = (
    Role("web", "name server: web app, admin, search page (no workers)", ("--no-workers",)),
    Role("qs0", "queue server 0 with its fetchers", (), (("QUEUE_SERVERS_HERE", "0"),)),
    Role("qs1", "queue server 1 with its fetchers", (), (("QUEUE_SERVERS_HERE", "1"),)),
    Role("fetch", "fetcher-only node", ("--queue-servers", "0")),
)

# Beyond what the README asks of every machine: smaller schedules (10 urls instead of 5000, so
# that a few hundred pages keep three fetcher nodes busy), an index refreshed every second, a
# link analysis every 40 pages (so that one runs early while the crawl does, and the
# fetcher-only node receives its scores with a later schedule), and fewer processes on a small test machine.
TUNING = {"DOWNLOAD_SIZE_INTERVAL": "10", "INDEX_REFRESH_SECONDS": "1",
          "LINK_ANALYSIS_EVERY_PAGES": "40", "NUM_FETCHERS": "1", "WEB_WORKERS": "1"}


def common_env(database_url: str, redis_url: str, token: str, secret: str) -> dict[str, str]:
    """What every machine of the engine shares."""
    return {"DATABASE_URL": database_url, "REDIS_URL": redis_url, "QUEUE_SERVER_TOKEN": token,
            "SECRET_KEY": secret, "NUM_QUEUE_SERVERS": "2",
            "CRAWLER_ALLOWED_NETWORKS": "198.18.0.0/15", **TUNING}


def base_env(home: Path) -> dict[str, str]:
    """A clean process environment (nothing of the caller's engine settings leaks in)."""
    return {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "LANG": "C.UTF-8",
            "HOME": str(home), "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": "searchsite.settings.base"}


def machine_env(common: dict[str, str], role: Role, address: str, folder: Path) -> dict[str, str]:
    """The environment of machine ``role`` at ``address``: its own folder, bind address and
    url, plus what its role asks."""
    folder.mkdir(parents=True, exist_ok=True)
    return {**base_env(folder), **common, "VAR_DIRECTORY": str(folder / "var"),
            "WEB_BIND": f"{address}:{WEB_PORT}", "ALLOWED_HOSTS": address,
            "QUEUE_SERVER_BASE_URL": f"http://{address}:{WEB_PORT}/", **dict(role.env)}


class Engine:
    def __init__(self, procs: Processes, envs: dict[str, dict[str, str]]) -> None:
        self.procs, self.envs = procs, envs

    def manage(self, role: str, *args: str, timeout: float = 300) -> str:
        return self.procs.run(role, [PYTHON, "manage.py", *args], self.envs[role],
                              timeout=timeout).stdout

    def django_json(self, role: str, code: str) -> object:
        """Run ``code`` (which prints one JSON line last) in ``manage.py shell`` on ``role``."""
        out = self.manage(role, "shell", "-v", "0", "-c", textwrap.dedent(code))
        return json.loads(out.strip().splitlines()[-1])

    def up(self, role: Role) -> None:
        self.procs.start(f"{role.name}-up", role.name,
                         [PYTHON, "manage.py", "up", *role.up_args], self.envs[role.name],
                         cwd=ROOT)

    def wait_up(self, role: Role, timeout: float = 240) -> None:
        self.procs.wait_for(f"{role.name}-up", "all processes are up", timeout)

    def down(self, role: Role) -> None:
        self.procs.stop(f"{role.name}-up", timeout=60)


FACTS = """
    import json
    from crawler.core.queue_server.heartbeat import crawl_counters
    from crawler.models import Crawl, Fetcher, QueueServer
    from linkgraph.selectors import link_analysis_status_get
    crawl = Crawl.objects.get(pk=CRAWL)
    print(json.dumps({
        "status": crawl.status, "timestamp": crawl.timestamp,
        "pages_fetched": crawl.pages_fetched, "documents_indexed": crawl.documents_indexed,
        "fetchers": [{"host": f.host, "name": f.name, "schedules": f.schedules_done,
                      "pages": f.pages_fetched} for f in Fetcher.objects.all()],
        "queue_servers": [{"server": q.server_id, "url": q.base_url, "state": q.state,
                           "counters": {k: v for k, v in (
                               crawl_counters(q.counters, crawl.pk) or {}).items()
                                        if isinstance(v, (int, float, str, bool))}}
                          for q in QueueServer.objects.order_by("server_id")],
        "link_analysis": link_analysis_status_get(crawl.pk),
    }))
"""


# The single-machine search of the same index: the web machine's search service (its Page
# Options, from the shared database) over both queue servers' bundles read as local shards,
# each with its machine's copy of the scores file, as one machine running both queue servers
# reads them. Prints each query's top 10 (url, score) as one JSON line.
ONE_MACHINE_SEARCH = """
    import json
    from indexer.core.bundle.reader import IndexBundleReader
    from ranking.core.search.pipeline import Searcher
    from ranking.core.shard.local import LocalShard
    from ranking.search_service import search_service
    options = search_service().options()
    shards = [LocalShard(IndexBundleReader(path), f"qs{n}") for n, path in enumerate(BUNDLES)]
    out = {}
    with Searcher(shards, options) as searcher:
        for query in QUERIES:
            found = searcher.search(query, num=10, snippets=False)
            out[query] = [[r.url, round(r.score, 6)] for r in found.results]
    print(json.dumps(out))
"""


def one_machine_search(engine: Engine, bundles: list[Path], queries: list[str]
                       ) -> dict[str, list[list]]:
    """Each query's top 10 [url, score] searched as one machine (:data:`ONE_MACHINE_SEARCH`),
    run on the web machine with the same database and settings as its search page."""
    code = ONE_MACHINE_SEARCH.replace("BUNDLES", repr([str(b) for b in bundles])) \
        .replace("QUERIES", repr(list(queries)))
    return engine.django_json("web", code)  # type: ignore[return-value]


def crawl_facts(engine: Engine, crawl_id: int) -> dict:
    """What the shared database says of the crawl, its fetchers and queue servers (read on
    the web machine, as the admin's pages read it)."""
    return engine.django_json("web", FACTS.replace("CRAWL", str(int(crawl_id))))  # type: ignore[return-value]
