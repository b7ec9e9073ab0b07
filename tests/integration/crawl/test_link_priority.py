"""Link-analysis scores flow into crawl priority: a fetcher ranks a page's links by their
targets' scores (the link index i the scheduler's weights come from) and, in OPIC order, splits
the page's cash in proportion."""

import numpy as np

from crawler.core.definition.crawl import CrawlConfig, CrawlOrder
from crawler.core.fetcher import ScheduleWorker
from crawler.core.http import FetchConfig
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import Schedule, ScheduleEntry
from crawler.core.transport.wire import discovered_from_wire
from tests.fixtures.sites import FixtureServer, Response

PAGE = b"""<html><head><title>Hub</title></head><body>
<a href="/a.html">first link in page order</a> <a href="/b.html">second link in page order</a>
<a href="/c.html">third link in page order</a></body></html>"""


def hub(request):
    return Response(200, PAGE, {"Content-Type": "text/html"})


def discovered(order, scores):
    with FixtureServer(hub) as server:
        crawl = CrawlConfig(crawl_id=1, timestamp=5, name="p", order=order)
        shipped = []
        worker = ScheduleWorker(
            crawl, FetchConfig(allowed_networks=("127.0.0.0/8",)), PageProcessor(), 1,
            lambda server_n, batch: shipped.append(batch.to_wire()),
            link_scores=None if scores is None else (
                lambda urls: np.array([scores.get(u.rsplit("/", 1)[1], 0.0) for u in urls])))
        entry = ScheduleEntry(server.url("/"), 0, 3.0, 0, 0.0, None, 0)
        try:
            worker.run(Schedule("s", (entry,), 0.0, 0.0, 100), 0)
        finally:
            worker.close()
    rows = [discovered_from_wire(r) for batch in shipped for r in batch["discovered"]]
    return {r.url.rsplit("/", 1)[1]: r for r in rows}


def test_page_order_without_scores():
    rows = discovered(CrawlOrder.HOST_BUDGETING, None)
    assert [rows[n].link_index for n in ("a.html", "b.html", "c.html")] == [0, 1, 2]


def test_better_scored_targets_rank_first_and_take_more_cash():
    rows = discovered(CrawlOrder.OPIC, {"c.html": 5.0, "b.html": 1.0})
    assert rows["c.html"].link_index == 0 and rows["b.html"].link_index == 1
    assert rows["a.html"].link_index == 2
    cash = {n: rows[n].opic_cash for n in rows}
    assert cash["c.html"] > cash["b.html"] > cash["a.html"] > 0
    assert abs(sum(cash.values()) - 3.0) < 1e-9
