"""Where the shard token goes (issue 34, item 5): queue-server rows are read only in the admin;
a search sends the shard bearer only to queue servers that registered their url with the
shared token (their heartbeat) or that the operator declared; and the bearer, the key that signs
crawl messages and the configured secret are three different values. Through the test client,
against a real HTTP server on loopback that records what it is sent."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse

from crawler import services
from crawler.core.transport.shipping import seal
from crawler.models import QueueServer
from crawler.tasks import qs_receive_task
from indexer.core.shard_token import TOKEN_HEADER, message_key, shard_bearer

pytestmark = pytest.mark.django_db
SECRET = "the-configured-queue-server-token"


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request 404 and keeps the shard-token header it carried."""

    def do_GET(self) -> None:
        self.server.tokens.append(self.headers.get(TOKEN_HEADER))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def recorder():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.tokens = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def engine(settings, search_work):
    settings.QUEUE_SERVER_TOKEN = SECRET
    settings.QUEUE_SERVER_BASE_URL = "http://127.0.0.1:1/"  # this machine: not the recorder
    return search_work


def test_staff_cannot_change_a_queue_server_row(admin_client):
    services.queue_server_heartbeat(0, "http://127.0.0.9:8000/")
    row = QueueServer.objects.get(server_id=0)
    change = reverse("admin:crawler_queueserver_change", args=[row.pk])
    response = admin_client.post(change, {"server_id": 0, "base_url": "http://evil.test/",
                                          "state": "up"})
    assert response.status_code == 403
    assert QueueServer.objects.get(pk=row.pk).base_url == "http://127.0.0.9:8000/"
    assert admin_client.get(reverse("admin:crawler_queueserver_add")).status_code == 403
    page = admin_client.get(change).content.decode()
    assert "http://127.0.0.9:8000/" in page and 'name="base_url"' not in page


def test_a_row_pointed_elsewhere_is_never_sent_the_token(client, engine, recorder):
    services.queue_server_heartbeat(1, "http://127.0.0.9:8000/")
    # the row's url changed by anything but its queue server (the admin of old, a database
    # write): no valid registration for the new url
    QueueServer.objects.filter(server_id=1).update(
        base_url=f"http://127.0.0.1:{recorder.server_address[1]}/")
    for _ in range(3):
        assert client.get("/", {"q": "lighthouse", "f": "json"}).status_code == 200
    assert recorder.tokens == []


def test_a_registered_queue_server_gets_the_bearer_not_the_secret(client, engine, recorder):
    url = f"http://127.0.0.1:{recorder.server_address[1]}/"
    services.queue_server_heartbeat(1, url)  # its own heartbeat registers the url
    assert client.get("/", {"q": "lighthouse", "f": "json"}).status_code == 200
    assert recorder.tokens and set(recorder.tokens) == {shard_bearer(SECRET)}
    assert shard_bearer(SECRET) not in (SECRET, message_key(SECRET))


def test_the_bearer_cannot_sign_crawl_messages(settings, tmp_path, redis_url):
    settings.WORK_DIRECTORY = tmp_path
    settings.REDIS_URL = redis_url
    settings.QUEUE_SERVER_TOKEN = SECRET
    batch = {"crawl": 5, "schedule": "s", "documents": []}
    route = {"server": 0, "crawl": 5}
    for key in (SECRET, shard_bearer(SECRET)):  # what a shard server sees, or the secret
        refused = qs_receive_task(seal("batch", batch, key, route=route))
        assert "bad signature" in refused["refused"]
    stored = qs_receive_task(seal("batch", batch, message_key(SECRET), route=route))
    assert stored["server"] == 0 and stored["crawl"] == 5
