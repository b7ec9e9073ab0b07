"""`manage.py up` on one machine of several: QUEUE_SERVERS_HERE names the queue servers it runs,
so that two machines with NUM_QUEUE_SERVERS=2 run queue server 0 and queue server 1, not both 0
(README "Running on several machines")."""

from pathlib import Path

import pytest
from django.core.management.base import CommandError

from operations.management.commands.up import queue_server_numbers, scheduler_spec, worker_specs


def test_the_machine_of_queue_server_1_runs_it_alone():
    assert queue_server_numbers(2, (1,), 2) == [1]
    specs = worker_specs("python", "/engine", 2, queue_server_numbers(2, (1,), 2))
    names = [spec.name for spec in specs]
    assert names == ["fetchers", "analysis", "qs1-inbox", "queue-server-1"]
    by_name = {spec.name: spec.argv for spec in specs}
    assert by_name["queue-server-1"][-2:] == ["--server", "1"]
    assert by_name["qs1-inbox"][by_name["qs1-inbox"].index("-Q") + 1] == "qs.1"


def test_unset_runs_all_and_zero_runs_none():
    assert queue_server_numbers(2, (), 2) == [0, 1]
    assert queue_server_numbers(0, (1,), 2) == []
    fetcher_node = worker_specs("python", "/engine", 3, [])
    assert [spec.name for spec in fetcher_node] == ["fetchers"]  # no link-analysis worker


@pytest.mark.parametrize("here", [(2,), (-1,), (1, 1)])
def test_numbers_outside_the_engine_are_refused(here):
    with pytest.raises(CommandError, match="QUEUE_SERVERS_HERE"):
        queue_server_numbers(2, here, 2)


def test_the_scheduler_is_celery_beat_with_its_state_in_var():
    spec = scheduler_spec("python", "/engine", Path("/var/engine"))
    assert spec.name == "scheduler" and spec.argv[1:6] == ["-m", "celery", "-A", "searchsite",
                                                            "beat"]
    assert spec.argv[spec.argv.index("-s") + 1] == "/var/engine/celerybeat-schedule"
