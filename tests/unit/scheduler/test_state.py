"""The checkpoint state file: version 2 (JSON) round trips, and queues checkpointed by the
version-1 code (a pickle of the queue's classes) still resume exactly as that code resumed them
(fixtures and scenario in ``tests/fixtures/scheduler``). The expected files were written
again when the needy lane's importance lost its always-zero OPIC third (issue 35): two lane urls
of the scenario changed places, nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crawler.core.definition.crawl import CrawlOrder
from crawler.core.scheduler.durable.state import ETAG_MAGIC, FORMAT, STATE_MAGIC
from crawler.core.scheduler.durable.storage import read_blob
from tests.fixtures.scheduler.legacy_scenario import HERE, resume


def _state_version(folder: Path) -> int:
    gen = (folder / "CURRENT").read_text().strip()
    version, _ = read_blob(folder / "QueueState" / f"state.{gen}.bin", STATE_MAGIC, FORMAT)
    etag_version, _ = read_blob(folder / "EtagExpires" / f"etag.{gen}.bin", ETAG_MAGIC, FORMAT)
    assert etag_version == version
    return version


@pytest.mark.parametrize("order", list(CrawlOrder))
def test_a_version_1_queue_resumes_as_the_version_1_code_resumed_it(order, tmp_path):
    folder = tmp_path / "q"
    shutil.copytree(HERE / f"legacy_{order.value}", folder)
    assert _state_version(folder) == 1
    expected = json.loads((HERE / f"expected_{order.value}.json").read_text())
    result = json.loads(json.dumps(resume(folder, order)))
    assert result == expected
    assert _state_version(folder) == FORMAT


def test_version_2_state_is_json(make_queue, tmp_path):
    queue = make_queue(order=CrawlOrder.OPIC)
    queue.add_seeds(["http://a.example/", "http://b.example/"])
    queue.close()
    gen = (tmp_path / "q" / "CURRENT").read_text().strip()
    _, payload = read_blob(tmp_path / "q" / "QueueState" / f"state.{gen}.bin", STATE_MAGIC,
                           FORMAT)
    state = json.loads(payload)
    assert state["config"]["order"] == "opic"
    assert state["order"]["pool"]["urls"] == ["http://a.example/", "http://b.example/"]
    assert sorted(state["hosts"]) == ["http://a.example", "http://b.example"]
