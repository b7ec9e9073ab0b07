"""The client address (issue 34, item 6): the socket's peer, and a forwarded header only from
the reverse proxies ``TRUSTED_PROXIES`` names. With the header setting on and no
``METRICS_TOKEN``, ``X-Forwarded-For: 127.0.0.1`` from anywhere opened ``/metrics``; the login
throttle counted the address a client chose."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import RequestFactory

from operations.client_address import client_address

pytestmark = pytest.mark.django_db

HEADER = "HTTP_X_FORWARDED_FOR"


@pytest.fixture
def proxied(settings, tmp_path):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    settings.METRICS_TOKEN = ""
    settings.LOGIN_CLIENT_ADDRESS_HEADER = HEADER
    return settings


def test_a_forged_forwarded_header_does_not_open_metrics(client, proxied):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9",
                      **{HEADER: "127.0.0.1"}).status_code == 403
    proxied.TRUSTED_PROXIES = ("192.0.2.1",)  # a proxy, but not this peer
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9",
                      **{HEADER: "127.0.0.1"}).status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200  # the peer


def test_behind_a_trusted_proxy_the_client_is_the_last_untrusted_hop(client, proxied):
    proxied.TRUSTED_PROXIES = ("127.0.0.1", "10.0.0.0/8")
    # a remote client through two proxies on this machine: the nearest one's entry is the
    # other proxy's address, not the client's
    chained = {HEADER: "203.0.113.9, 127.0.0.1"}
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1", **chained).status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1",
                      **{HEADER: "127.0.0.1"}).status_code == 200  # a client on this machine


@pytest.mark.parametrize(("peer", "header", "expected"), [
    ("203.0.113.9", "127.0.0.1", "203.0.113.9"),            # untrusted peer: header ignored
    ("127.0.0.1", "198.51.100.4", "198.51.100.4"),          # the proxy's word
    ("127.0.0.1", "1.2.3.4, 198.51.100.4", "198.51.100.4"),  # the entry the proxy appended
    ("127.0.0.1", "198.51.100.4, 10.0.0.7", "198.51.100.4"),  # through a second proxy
    ("127.0.0.1", "not an address", "127.0.0.1"),           # garbage: the proxy, not the text
    ("127.0.0.1", "", "127.0.0.1"),
    ("::ffff:127.0.0.1", "198.51.100.4", "198.51.100.4"),   # a mapped proxy address
])
def test_client_address(proxied, peer, header, expected):
    proxied.TRUSTED_PROXIES = ("127.0.0.1", "10.0.0.0/8")
    request = RequestFactory().get("/", REMOTE_ADDR=peer, **{HEADER: header})
    assert client_address(request) == expected


def test_the_header_without_trusted_proxies_is_a_warning(proxied):
    proxied.TRUSTED_PROXIES = ()
    with pytest.raises(SystemCheckError, match="yioopy.W002"):
        call_command("check", fail_level="WARNING")
    proxied.TRUSTED_PROXIES = ("127.0.0.1",)
    call_command("check", fail_level="WARNING")
