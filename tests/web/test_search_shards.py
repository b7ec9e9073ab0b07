"""Which shards a search reads: this machine's bundles from its work directory, and the queue
servers that registered another url (by their heartbeats) over HTTP, or exactly the urls
SEARCH_REMOTE_QUEUE_SERVERS declares."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from crawler import services
from crawler.models import QueueServer
from ranking.core.errors import NoIndexError
from ranking.core.remote.client import RemoteShard
from ranking.core.shard.local import LocalShard
from ranking.search_service import search_service
from ranking.selectors import remote_queue_server_urls
from tests.unit.ranking.helpers import build, text_doc

HERE = "http://127.0.0.1:8000/"

pytestmark = pytest.mark.django_db


@pytest.fixture
def here(settings, tmp_path):
    settings.WORK_DIRECTORY = tmp_path
    settings.QUEUE_SERVER_BASE_URL = HERE
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    yield tmp_path
    search_service().pool.close()


def test_registered_queue_servers_elsewhere_are_remote(here):
    services.queue_server_heartbeat(0, HERE)  # this machine's: read from disk
    services.queue_server_heartbeat(2, "http://10.0.0.3:8000/")
    services.queue_server_heartbeat(1, "http://10.0.0.2:8000")
    services.queue_server_heartbeat(3, "http://10.0.0.4:8000/")
    QueueServer.objects.filter(server_id=3).update(  # no heartbeat for long: not live
        last_heartbeat=timezone.now() - timedelta(hours=1))
    assert remote_queue_server_urls() == ("http://10.0.0.2:8000", "http://10.0.0.3:8000/")


def test_a_declared_list_is_used_instead(here, settings):
    services.queue_server_heartbeat(1, "http://10.0.0.2:8000/")
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ("http://10.0.0.9:8000/",)
    assert remote_queue_server_urls() == ("http://10.0.0.9:8000/",)


def test_shards_are_local_bundles_then_remote_servers(here):
    with pytest.raises(NoIndexError):
        search_service().shards(None)
    services.queue_server_heartbeat(0, HERE)  # this machine's queue server: never over HTTP
    with pytest.raises(NoIndexError):
        search_service().shards(None)
    build(here / "qs0" / "IndexData1000",
          [text_doc("https://a.example/", "a page", "words of a page")]).close()
    its, shards = search_service().shards(None)
    assert its == 1000 and [type(s) for s in shards] == [LocalShard]
    services.queue_server_heartbeat(1, "http://10.0.0.2:8000/")
    its, shards = search_service().shards(None)
    assert [type(s) for s in shards] == [LocalShard, RemoteShard]
    assert shards[1].base_url == "http://10.0.0.2:8000" and shards[1].its == 1000
