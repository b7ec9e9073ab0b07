"""The engine runs link analysis by itself: a crawl through real processes (queue server, its
inbox worker, fetchers, and the `analysis` worker as `manage.py up` starts it, on a real Redis)
finishes, and its scores file appears without anyone typing a command; a periodic run during
the crawl (LINK_ANALYSIS_EVERY_PAGES) is coalesced with the final one, never overlapping."""

from __future__ import annotations

import json
import time

import pytest

from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import LinkScores
from tests.fixtures.sites import FixtureServer, normal_site
from tests.integration.crawl.test_processes import Engine, start_crawl

pytestmark = [pytest.mark.redis, pytest.mark.slow]


def _analysis(engine) -> dict:
    return json.loads(engine.django("""
        import json
        from linkgraph.models import LinkAnalysis
        row = LinkAnalysis.objects.first()
        print(json.dumps(None if row is None else {
            "state": row.state, "outcome": row.last_outcome, "error": row.last_error,
            "runs": row.runs, "pages": row.last_pages, "urls": row.last_urls}))
    """) or "null")


def test_a_finished_crawl_is_analysed_by_the_analysis_worker(tmp_path, redis_url):
    site = normal_site("kappa", pages=8, crawl_delay=0.0)
    engine = Engine(tmp_path, redis_url)
    engine.env["LINK_ANALYSIS_EVERY_PAGES"] = "3"  # periodic runs during the crawl too
    try:
        with FixtureServer(site.route) as server:
            engine.celery("inbox", "qs.0")
            engine.celery("fetch-a", "fetch")
            engine.analysis_worker()
            engine.queue_server()
            timestamp = start_crawl(engine, [server.url("/")])
            engine.wait_status("stopped", timeout=150)
            deadline = time.monotonic() + 120
            row = _analysis(engine)
            while not (row and row["state"] == "idle" and row["outcome"]):
                assert time.monotonic() < deadline, (row, (tmp_path / "analysis.log")
                                                     .read_text()[-3000:])
                time.sleep(1)
                row = _analysis(engine)
    finally:
        engine.stop_all()
    assert row["outcome"] == "ok", row["error"]
    assert row["runs"] >= 1 and row["pages"] >= 8 and row["urls"] >= 8
    scores = LinkScores(scores_path(tmp_path / "var" / "work", timestamp))
    assert len(scores) == row["urls"]
    assert scores.score_of(server.url("/"), "inlinks") > 0
