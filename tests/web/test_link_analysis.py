"""Link analysis run by the engine itself (linkgraph.services, asked for by crawler.link_analysis): one run of a crawl at a time
and requests coalesced into one follow-up, failures recorded (never raised, never looped), the
hooks at a crawl's end and every LINK_ANALYSIS_EVERY_PAGES pages, and the admin's section and
"Run link analysis now" button."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import redis
from django.urls import reverse
from django.utils import timezone

from crawler import link_analysis, services
from crawler.link_analysis import (
    link_analysis_maybe_periodic,
    link_analysis_request,
    link_analysis_run,
)
from crawler.models import Crawl, QueueServer, SeedSite
from crawler.sending import ANALYSIS_QUEUE
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import LinkScores
from indexer.core.urls import hashes_of
from linkgraph import services as analysis_services
from linkgraph.models import LinkAnalysis
from linkgraph.selectors import link_analysis_status_get
from operations.redis_urls import redis_url_for
from searchsite.celery import app
from tests.conftest import free_port
from tests.unit.linkgraph.helpers import write_bundle

GOOD, SPAM = "https://good.org/", "https://spam.biz/"
PAGES = [
    (GOOD, '<title>Good</title><p>Good advice.</p><a href="/a.html">Tomatoes</a>'
           '<a href="https://spam.biz/">Cheap</a>'),
    ("https://good.org/a.html", '<title>A</title><p>Tomatoes.</p><a href="/">Home</a>'),
    (SPAM, '<title>Spam</title><p>Pills.</p><a href="https://good.org/a.html">Tips</a>'),
]


class Sent(list):
    """The runs a request queued (what the Celery task would have received)."""

    def __call__(self, crawl_id: int) -> None:
        self.append(crawl_id)


@pytest.fixture
def crawl(settings, tmp_path, make_crawl):
    settings.WORK_DIRECTORY = tmp_path
    settings.NUM_QUEUE_SERVERS = 2
    crawl = make_crawl(seeds=())
    SeedSite.objects.create(crawl=crawl, url=GOOD, policy="favor", trust_weight=2.0)
    SeedSite.objects.create(crawl=crawl, url=SPAM, policy="distrust")
    write_bundle(tmp_path / "qs0" / f"IndexData{crawl.timestamp}", PAGES[:2])
    write_bundle(tmp_path / "qs1" / f"IndexData{crawl.timestamp}", PAGES[2:])
    return crawl


def use_broker(url: str | None) -> None:
    """Point the Celery app at ``url``. Its pooled connections keep the broker they were opened
    on: they are dropped as Celery itself drops them in a forked child; so is the result
    backend it made meanwhile (later tests set their own)."""
    app.conf.broker_url = url
    app._after_fork()
    app._backend_cache = None
    app._local = threading.local()


@pytest.fixture
def closed_broker():
    """The Celery app pointed at a port nothing listens on: the broker is down."""
    use_broker(f"redis://127.0.0.1:{free_port()}/0")
    yield
    use_broker(None)


def _row(crawl) -> LinkAnalysis:
    return LinkAnalysis.objects.get(crawl=crawl)


def test_a_run_records_what_it_did_and_writes_the_scores(crawl, tmp_path):
    assert link_analysis_run(crawl.pk) == "ok"
    row = _row(crawl)
    assert (row.state, row.last_outcome, row.last_error) == ("idle", "ok", "")
    assert (row.last_pages, row.last_urls, row.runs) == (3, 3, 1)
    assert row.last_edges == 4 and row.last_seconds > 0
    assert row.last_started_at <= row.last_finished_at
    assert [s["server"] for s in row.last_shards] == [0, 1]
    scores = LinkScores(scores_path(tmp_path, crawl.timestamp))
    assert scores.scores_for(hashes_of([GOOD, SPAM]), "trust").tolist() == [2.0, -1.0]


def test_requests_are_coalesced_and_a_request_during_a_run_gives_one_follow_up(crawl):
    sent = Sent()
    assert link_analysis_request(crawl.pk, "crawl finished", sent) == "queued"
    assert link_analysis_request(crawl.pk, "button", sent) == "coalesced"
    assert sent == [crawl.pk] and _row(crawl).state == "queued"
    run = analysis_services._claim(_row(crawl).pk)  # the worker has taken the queued run
    assert run == 1 and _row(crawl).state == "running"
    assert link_analysis_run(crawl.pk, sent) == "busy"  # a second worker does not overlap
    for _ in range(3):
        assert link_analysis_request(crawl.pk, "more pages", sent) == "follow-up"
    assert sent == [crawl.pk] and _row(crawl).rerun
    assert analysis_services._finish(_row(crawl).pk, run, crawl.pk, sent) is False
    assert sent == [crawl.pk, crawl.pk]  # exactly one follow-up for four requests
    assert (_row(crawl).state, _row(crawl).rerun) == ("queued", False)
    assert link_analysis_run(crawl.pk, sent) == "ok" and _row(crawl).state == "idle"
    assert len(sent) == 2


def test_in_process_runs_do_their_follow_ups_themselves(crawl, monkeypatch):
    calls = []
    real = analysis_services.run_link_analysis

    def asked_for_during(*args, **kwargs):  # a request arrives while the first run works
        calls.append(1)
        if len(calls) == 1:
            assert link_analysis_request(crawl.pk, "more pages", Sent()) == "follow-up"
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis_services, "run_link_analysis", asked_for_during)
    assert link_analysis_run(crawl.pk) == "ok"
    assert len(calls) == 2 and _row(crawl).runs == 2 and _row(crawl).state == "idle"


def test_a_failure_is_recorded_and_shown_never_raised(crawl, tmp_path):
    manifest = tmp_path / "linkgraph" / str(crawl.timestamp) / "webgraph" / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("{ not json")  # a torn graph from a crashed machine
    assert link_analysis_run(crawl.pk) == "failed"
    row = _row(crawl)
    assert (row.state, row.last_outcome) == ("idle", "failed")
    assert "CorruptGraphError" in row.last_error and "manifest is not JSON" in row.last_error
    assert not scores_path(tmp_path, crawl.timestamp).exists()
    status = link_analysis_status_get(crawl.pk)
    assert status["last"]["outcome"] == "failed" and "not JSON" in status["last"]["error"]


def test_an_empty_crawl_is_analysed_without_error(settings, tmp_path, make_crawl):
    settings.WORK_DIRECTORY = tmp_path
    crawl = make_crawl()
    assert link_analysis_run(crawl.pk) == "ok"
    assert (_row(crawl).last_pages, _row(crawl).last_urls) == (0, 0)
    assert link_analysis_run(10**6) == "no crawl"
    assert link_analysis_request(10**6, "x", Sent()) == "no crawl"


def test_a_stalled_run_is_taken_over(crawl, settings):
    sent = Sent()
    link_analysis_request(crawl.pk, "first", sent)
    pk = _row(crawl).pk
    dead = analysis_services._claim(pk)
    assert link_analysis_request(crawl.pk, "second", sent) == "follow-up"
    LinkAnalysis.objects.filter(pk=pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.LINK_ANALYSIS_STALE_SECONDS + 5))
    assert link_analysis_status_get(crawl.pk)["state"] == "stalled"
    assert link_analysis_request(crawl.pk, "third", sent) == "queued"
    assert link_analysis_run(crawl.pk, sent) == "ok" and _row(crawl).runs == dead + 1
    # the dead run, had it been only slow, cannot clobber its successor's state
    assert analysis_services._finish(pk, dead, crawl.pk, sent) is False
    assert _row(crawl).state == "idle"


def test_a_broker_that_is_down_is_recorded(crawl, closed_broker):
    assert link_analysis_request(crawl.pk, "crawl finished") == "failed"
    row = _row(crawl)
    assert row.state == "idle" and row.last_outcome == "failed"
    assert "could not be queued" in row.last_error


def test_periodic_requests_every_n_pages(crawl, settings, monkeypatch):
    settings.LINK_ANALYSIS_EVERY_PAGES = 10
    sent = Sent()
    monkeypatch.setattr(link_analysis, "_default_enqueue", sent)
    pages = Crawl.objects.filter(pk=crawl.pk)
    pages.update(pages_fetched=9)
    assert link_analysis_maybe_periodic(crawl.pk) is None
    pages.update(pages_fetched=12)
    assert link_analysis_maybe_periodic(crawl.pk) == "queued"
    pages.update(pages_fetched=21)
    assert link_analysis_maybe_periodic(crawl.pk) is None  # 9 pages since the request
    pages.update(pages_fetched=22)
    assert link_analysis_maybe_periodic(crawl.pk) == "coalesced"  # the queued run sees them
    settings.LINK_ANALYSIS_EVERY_PAGES = 0
    pages.update(pages_fetched=10**6)
    assert link_analysis_maybe_periodic(crawl.pk) is None
    assert sent == [crawl.pk]


@pytest.mark.redis
@pytest.mark.parametrize("end", ["finish", "stop", "saved"])
def test_a_crawl_that_ends_queues_its_analysis_on_the_broker(
        crawl, redis_url, end, django_capture_on_commit_callbacks):
    use_broker(redis_url_for(redis_url, celery=True))
    broker = redis.Redis.from_url(redis_url)
    broker.delete(ANALYSIS_QUEUE)
    try:
        services.crawl_start(crawl.pk)
        if end == "saved":  # a live queue server saves the queues first
            QueueServer.objects.create(server_id=0, base_url="http://127.0.0.1:1/",
                                       state="up", last_heartbeat=timezone.now())
        with django_capture_on_commit_callbacks(execute=True):
            if end == "finish":
                services.crawl_finish(crawl.pk)
            else:
                services.crawl_stop(crawl.pk)
        if end == "saved":
            assert _row_or_none(crawl) is None  # stopping: the shards are still writing
            with django_capture_on_commit_callbacks(execute=True):
                services.crawl_mark_saved(crawl.pk)
        assert _row(crawl).state == "queued"
        assert broker.llen(ANALYSIS_QUEUE) == 1
        with django_capture_on_commit_callbacks(execute=True):  # the caller runs it itself
            crawl_two = Crawl.objects.create(name="two", page_options=crawl.page_options)
            SeedSite.objects.create(crawl=crawl_two, url=GOOD)
            services.crawl_start(crawl_two.pk)
            services.crawl_finish(crawl_two.pk, analyse=False)
        assert _row_or_none(crawl_two) is None and broker.llen(ANALYSIS_QUEUE) == 1
    finally:
        broker.delete(ANALYSIS_QUEUE)
        use_broker(None)


def _row_or_none(crawl):
    return LinkAnalysis.objects.filter(crawl=crawl).first()


# --- admin ------------------------------------------------------------------------------------


def _status(admin_client, crawl) -> str:
    return admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])
                            ).content.decode()


def test_admin_shows_the_last_run_and_its_progress(admin_client, crawl):
    page = _status(admin_client, crawl)
    assert "Link analysis has not run for this crawl yet" in page
    assert "Run link analysis now" in page and "after every 5000 new pages" in page
    link_analysis_run(crawl.pk)
    page = _status(admin_client, crawl)
    row = _row(crawl)
    assert 'class="link-analysis-ok">OK<' in page
    assert f'data-la="pages">{row.last_pages}<' in page and f'data-la="urls">{row.last_urls}<' in page
    assert f'data-la="edges">{row.last_edges}<' in page and "Queue server 1" in page
    # while a run works, its stage and counts are in the status JSON the page polls
    pk = row.pk
    run = analysis_services._claim(pk)
    analysis_services._ProgressRecorder(pk, run)("linkrank", 12, 200)
    data = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk])).json()
    running = data["link_analysis"]["running"]
    assert data["link_analysis"]["state"] == "running"
    assert (running["stage"], running["done"], running["total"], running["percent"]) == \
        ("LinkRank iterations", 12, 200, 6.0)
    assert "LinkRank iterations 12/200 (6.0%)" in _status(admin_client, crawl)


def test_admin_shows_a_failed_run_with_its_message(admin_client, crawl, tmp_path):
    manifest = tmp_path / "linkgraph" / str(crawl.timestamp) / "webgraph" / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("[]")
    link_analysis_run(crawl.pk)
    page = _status(admin_client, crawl)
    assert 'class="link-analysis-failed">Failed<' in page and "not a web graph manifest" in page


def test_run_now_button(admin_client, crawl, monkeypatch):
    sent = Sent()
    monkeypatch.setattr(link_analysis, "_default_enqueue", sent)
    url = reverse("admin:crawler_crawl_link_analysis", args=[crawl.pk])
    assert admin_client.get(url).status_code == 405
    response = admin_client.post(url, follow=True)
    assert response.status_code == 200 and "Link analysis queued" in response.content.decode()
    response = admin_client.post(url, follow=True)
    assert "already queued" in response.content.decode() and sent == [crawl.pk]
    assert admin_client.post(reverse("admin:crawler_crawl_link_analysis", args=[10**6])
                             ).status_code == 404


def test_run_now_with_the_broker_down_says_why(admin_client, crawl, closed_broker):
    response = admin_client.post(reverse("admin:crawler_crawl_link_analysis", args=[crawl.pk]),
                                 follow=True)
    body = response.content.decode()
    assert response.status_code == 200 and "Link analysis not queued" in body
    assert "could not be queued" in body
