"""Fetcher-only machines receive the crawl's link scores (issue 35, item 2): a queue server's
schedule messages name the version of the scores file it holds, and a fetcher on a machine
without that version fetches the file from the queue server's registered url (a real web
server process, the engine's WSGI app, standing for the queue server's machine), installs it
in its own work directory, and orders links with it."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest

from crawler import services
from crawler.core.transport.spool import Spool
from crawler.machines.fetching import _LinkScoresCache
from crawler.machines.queue_server import QueueServerProcess
from crawler.machines.score_delivery import RETRY_SECONDS, ScoreDelivery, file_version
from crawler.models import Crawl, SeedSite
from indexer.core.runtime.workdir import crawl_paths, scores_path
from indexer.core.signals.link_scores import LinkScores, write_scores
from tests.processes import machine_web_server
from tests.unit.linkgraph.helpers import graph_of

pytestmark = pytest.mark.django_db
TOKEN = "fetch-node-token"
HUB, LEAF = "https://hub.example/", "https://leaf.example/"


def _write(work, crawl: int, hub: float) -> str:
    graph = graph_of([(LEAF, HUB)])
    score = np.full(graph.n, 1.0 - hub)
    score[graph.node_id(HUB)] = hub
    path = write_scores(scores_path(work, crawl), graph.with_scores(score=score),
                        {"crawl": crawl})
    return str(LinkScores(path).version)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def queue_server_machine(tmp_path):
    """Queue server 1's machine: its own work directory, served by its own web server."""
    with machine_web_server(tmp_path, "qs", TOKEN) as machine:
        yield machine


@pytest.mark.slow
def test_a_fetcher_machine_fetches_the_scores_its_queue_server_announces(
        settings, tmp_path, queue_server_machine, caplog):
    qs_work, base_url, proc = queue_server_machine
    settings.WORK_DIRECTORY = tmp_path / "fetcher-work"
    settings.QUEUE_SERVER_TOKEN = TOKEN
    services.queue_server_heartbeat(1, base_url)  # its signed registration
    crawl = 1_700_000_035
    first = _write(qs_work, crawl, 0.9)
    mine = scores_path(settings.WORK_DIRECTORY, crawl)
    links = _LinkScoresCache()
    assert links.lookup(crawl) is None  # nothing here yet: links in page order
    clock = Clock()
    delivery = ScoreDelivery(clock=clock)
    assert delivery.ensure(crawl, 1, None) == "none"  # a message without scores
    assert delivery.ensure(crawl, 1, first) == "installed"
    assert mine.read_bytes() == scores_path(qs_work, crawl).read_bytes()
    assert delivery.ensure(crawl, 1, first) == "here"  # nothing travels again
    assert ScoreDelivery().ensure(crawl, 1, first) == "here"  # another fetcher process
    hub, leaf = links.lookup(crawl)([HUB, LEAF])
    assert hub > leaf  # the fetcher orders this machine's links with the scores
    # the next analysis: a new version announced, fetched, used
    second = _write(qs_work, crawl, 0.1)
    assert delivery.ensure(crawl, 1, second) == "installed" and file_version(mine) == second
    hub, leaf = links.lookup(crawl)([HUB, LEAF])
    assert hub < leaf
    # the queue server's machine gone: the file this machine has stays, tried again later
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert delivery.ensure(crawl, 1, "third") == "failed"
    assert "cannot be reached" in caplog.text and file_version(mine) == second
    assert delivery.ensure(crawl, 1, "third") == "later"
    clock.now += RETRY_SECONDS
    assert delivery.ensure(crawl, 1, "third") == "failed"
    assert delivery.ensure(crawl, 7, "other") == "failed"
    assert "queue server 7 is not registered" in caplog.text


def test_schedule_messages_name_the_queue_servers_scores_version(settings, tmp_path):
    settings.WORK_DIRECTORY = tmp_path
    sent: list[dict] = []
    process = QueueServerProcess(0, 1, "http://127.0.0.1:9/", sent.append)
    crawl = Crawl.objects.create(name="scores", page_options=services.page_options_default_get())
    SeedSite.objects.create(crawl=crawl, url=HUB)
    services.crawl_start(crawl.pk)
    crawl.refresh_from_db()
    inbox = Spool(crawl_paths(tmp_path / "qs0", crawl.timestamp)["inbox"])
    try:
        process.tick()
        (robots,) = sent  # robots.txt first; no scores yet: the message names none
        assert "scores" not in robots
        version = _write(tmp_path, crawl.timestamp, 0.7)  # the analysis's file arrives
        inbox.put("batch", json.dumps({
            "crawl": crawl.timestamp, "server": 0, "schedule": robots["id"], "done": True,
            "docs": [], "discovered": [], "robots": [{"origin": HUB.rstrip("/"),
                                                      "status": 404, "body": None}],
            "host_errors": {}, "fetched": [], "counters": {}}).encode())
        process.tick()
        assert len(sent) == 2 and [e[0] for e in sent[1]["entries"]] == [HUB]
        assert sent[1]["scores"] == version
    finally:
        process._close()


def test_a_delivery_that_cannot_be_written_fails_alone(settings, tmp_path, caplog):
    """A machine whose work directory cannot take the file: the schedule goes on without it."""
    settings.WORK_DIRECTORY = tmp_path
    (tmp_path / "linkgraph").write_text("a file where the folder should be")
    delivery = ScoreDelivery(locate=lambda server: "http://127.0.0.1:9/")
    assert delivery.ensure(5, 0, "v1") == "failed" and "not fetched" in caplog.text
    assert delivery.ensure(5, 0, "v1") == "later"
