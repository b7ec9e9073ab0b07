"""The crawl's Celery tasks, called as functions: messages need the shared token, and a
queue server's inbox holds a batch before the task returns."""

import json

import pytest

from crawler.core.shipping import seal
from crawler.tasks import fetch_schedule_task, inbox_for, qs_receive_task


def test_inbox_write_is_durable_before_return(settings, tmp_path):
    settings.WORK_DIRECTORY = tmp_path
    batch = {"crawl": 123, "server": 1, "docs": [], "discovered": [["https://a.com/", 0, 0, "",
                                                                     0.0, 0, False, True, 0.0]]}
    assert qs_receive_task(seal("batch", batch, settings.QUEUE_SERVER_TOKEN)) == 0
    (item,) = list(inbox_for(1, 123).take("batch"))
    assert json.loads(item.payload) == batch


@pytest.mark.parametrize("token", ["wrong", ""])
def test_messages_without_the_token_are_refused(settings, tmp_path, token):
    settings.WORK_DIRECTORY = tmp_path
    batch = {"crawl": 1, "server": 0}
    bad = seal("batch", batch, token) if token else {"v": 1, "kind": "batch", "body": "", "sig": ""}
    assert qs_receive_task(bad) == 0
    assert list(inbox_for(0, 1).take("batch")) == []
    refused = fetch_schedule_task(seal("schedule", {"id": "x"}, "wrong"))
    assert "refused" in refused


def test_a_batch_sent_as_a_schedule_is_refused(settings):
    message = seal("batch", {"crawl": 1, "server": 0}, settings.QUEUE_SERVER_TOKEN)
    assert "refused" in fetch_schedule_task(message)
