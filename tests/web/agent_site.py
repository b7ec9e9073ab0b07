"""A small documentation site for the agent API's tests (issue 38), crawled by ``manage.py
crawl`` over loopback: pages with headings, code, lists and non-ASCII text (so that offsets
count characters, not bytes), one page that forbids a cached copy (NOARCHIVE), an
``.md`` twin of one page (``TWIN``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.process import PageProcessor
from tests.fixtures.sites import FixtureServer
from tests.fixtures.sites.sites import html, not_found, text

NAV = '<nav><a href="/">Home</a> <a href="/queues.html">Queues</a></nav>'


def _page(title: str, body: str, head: str = "") -> bytes:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"{head}</head><body>{NAV}<main>{body}</main><footer>© the authors</footer>"
            "</body></html>").encode()


PAGES = {
    "/": _page("Zephyrine manual", """
<h1>Zephyrine manual</h1>
<p>Zephyrine is a task runner. Read about <a href="/queues.html">queues</a>,
<a href="/workers.html">workers</a> and <a href="/unicode.html">names</a>.</p>
<p><a href="/secret.html">Internal notes</a></p>"""),
    "/queues.html": _page("Queues", """
<h1>Queues</h1>
<p>A zephyrine queue holds tasks until a worker takes them. Queues are durable: a task
survives a restart of the broker.</p>
<h2>Priorities</h2>
<p>Each zephyrine queue has ten priority levels; a higher level is taken first.</p>
<pre>queue = Queue("mail", priority=9)
queue.put(task)</pre>
<h2>Retries</h2>
<ul><li>A failed task is retried three times.</li><li>The delay doubles each time.</li></ul>
<p><a href="/workers.html">Workers</a></p>"""),
    "/workers.html": _page("Workers", """
<h1>Workers</h1>
<p>A zephyrine worker takes tasks from one or more queues and runs them with a
<code>concurrency</code> of its own.</p>
<h2>Shutdown</h2>
<p>On SIGTERM a worker finishes the task it runs and then stops; a second SIGTERM stops it
at once.</p>
<p><a href="/workers.html.md">This page as Markdown</a></p>"""),
    "/unicode.html": _page("Namen und Zeichen", """
<h1>Namen — Zeichen</h1>
<p>Ein zephyrine Arbeiter heißt „Fräulein Müller“ 🐝 und die Warteschlange 队列 läuft
schnell.</p>
<p>Größere Aufgaben brauchen mehr Speicher; zephyrine misst ihn in Bytes.</p>"""),
    "/secret.html": _page("Internal notes", "<h1>Internal notes</h1><p>zephyrine internals "
                          "are not to be archived.</p>",
                          '<meta name="robots" content="noarchive">'),
}


# the Markdown twin of /workers.html, as sites that publish an llms.txt serve them
TWIN = ("# Workers (Markdown)\n\nA zephyrine worker runs tasks from its queues, with a "
        "`concurrency` of its own.\n\n## Stopping\n\n- First SIGTERM: finish the task.\n"
        "- Second SIGTERM: stop at once.\n")


def route(request):
    if request.path == "/workers.html.md":
        return text(TWIN)
    page = PAGES.get(request.path)
    if page is None:
        return not_found(request)
    return html(page)


ITS = 1_700_000_000


def crawl_site(work: Path, seed: str) -> list[Path]:
    """A crawl of ``seed`` (the site links nowhere else) into ``work`` (an engine's work
    directory) by the engine's in-process crawler (:class:`crawler.core.local_crawl.LocalCrawl`:
    the queue server's scheduler and indexer, fetchers and page processing, without the
    database); its bundles."""
    crawl = CrawlConfig(crawl_id=1, timestamp=ITS, name="agent site",
                        seeds=(SeedSpec(seed),))
    fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0,
                        read_timeout=2.0, page_deadline=3.0)
    runner = LocalCrawl(crawl, work, fetch, PageProcessor(), fetchers=2, schedule_size=50,
                        refresh_seconds=0.0)
    try:
        result = runner.run(max_seconds=90)
    finally:
        runner.close()
    assert result.finished, "the crawl did not finish in time"
    return list(result.index_paths)


@contextmanager
def crawled_site(work: Path) -> Iterator[FixtureServer]:
    """The site served on loopback and crawled into ``work``; stopped when the block ends."""
    with FixtureServer(route) as server:
        crawl_site(work, server.url("/"))
        yield server
