"""operations.redis_urls: the urls made from REDIS_URL are read back, by the libraries that use
them, as the same server, password and database (redis-py for the engine's own clients and
Django's cache; kombu's transport and Celery's result backend for Celery). No server needed."""

from __future__ import annotations

import pytest
from celery import Celery
from kombu import Connection
from kombu.utils.url import url_to_parts
from redis.connection import SSLConnection, UnixDomainSocketConnection, parse_url

from operations.redis_urls import (
    MAX_UNIX_SOCKET_PATH_BYTES,
    RedisUrlError,
    redis_url_for,
    unix_socket_path_too_long,
    unix_socket_url,
)

PASSWORD = "pa ss/w@rd%:?"  # every character a url treats specially
SOCKET = "/srv/yioopy var/redis/redis.sock"


def kombu_broker(url: str) -> dict:
    """What kombu's redis transport connects with: the ``socket://`` host it is given
    (``redis+socket`` is transport ``redis`` with that host) read as Channel._connparams reads
    it."""
    connection = Connection(url)
    assert connection.transport_cls == "redis"
    scheme, _, _, user, password, path, query = url_to_parts(connection.hostname)
    assert scheme == "socket"
    return {"path": "/" + path, "username": user, "password": password,
            "db": int(query.get("virtual_host", 0))}


def celery_backend(url: str) -> dict:
    return Celery(backend=url, set_as_current=False).backend.connparams


def test_a_unix_socket_url_is_read_back_by_redis_py():
    url = unix_socket_url(SOCKET, PASSWORD, db=3)
    assert parse_url(url) == {"path": SOCKET, "password": PASSWORD, "db": 3,
                              "connection_class": UnixDomainSocketConnection}
    assert parse_url(unix_socket_url(SOCKET))["db"] == 0 and "password" not in parse_url(
        unix_socket_url(SOCKET))


def test_celerys_form_of_a_unix_socket_is_the_same_socket_password_and_database():
    celery = redis_url_for(unix_socket_url(SOCKET, PASSWORD, db=3), celery=True)
    assert celery.startswith("redis+socket://")
    assert kombu_broker(celery) == {"path": SOCKET, "username": None, "password": PASSWORD,
                                    "db": 3}
    backend = celery_backend(celery)
    assert (backend["path"], backend["password"], backend["db"]) == (SOCKET, PASSWORD, 3)
    assert backend["connection_class"] is UnixDomainSocketConnection


def test_a_password_or_user_in_a_unix_urls_query_reaches_celery_too():
    url = f"unix://{SOCKET.replace(' ', '%20')}?db=2&password=pw&username=engine"
    assert parse_url(url)["password"] == "pw"
    assert kombu_broker(redis_url_for(url, celery=True)) == {
        "path": SOCKET, "username": "engine", "password": "pw", "db": 2}


def test_another_database_of_the_same_server_in_every_scheme():
    assert redis_url_for("redis://:pw@10.0.0.5:6390/0", db=13) == "redis://:pw@10.0.0.5:6390/13"
    assert redis_url_for("redis://127.0.0.1", db=1) == "redis://127.0.0.1/1"
    tls = "rediss://:pw@redis-host:6379/0?ssl_cert_reqs=required"
    assert redis_url_for(tls, db=4) == "rediss://:pw@redis-host:6379/4?ssl_cert_reqs=required"
    assert parse_url(redis_url_for(tls, db=4))["connection_class"] is SSLConnection
    unix = redis_url_for(unix_socket_url(SOCKET, PASSWORD, db=0), db=13)
    assert parse_url(unix) == {"path": SOCKET, "password": PASSWORD, "db": 13,
                               "connection_class": UnixDomainSocketConnection}
    assert kombu_broker(redis_url_for(unix, celery=True))["db"] == 13
    assert kombu_broker(redis_url_for(unix, db=5, celery=True))["db"] == 5


def test_tcp_urls_are_given_to_celery_as_they_are():
    for url in ("redis://:pw@127.0.0.1:6390/0",
                "rediss://:pw@redis-host:6379/0?ssl_cert_reqs=required"):
        assert redis_url_for(url, celery=True) == url
        assert redis_url_for(url) == url


@pytest.mark.parametrize("url", ["amqp://guest@localhost//", "sentinel://h:26379",
                                 "unix://relative/redis.sock", "unix:///r.sock?db=x",
                                 "unix:///r.sock?db=-1", "redis.sock"])
def test_what_is_not_a_redis_url_is_a_clear_error(url):
    with pytest.raises(RedisUrlError, match="Redis url|unix socket url"):
        redis_url_for(url, celery=True)


def test_a_relative_socket_path_is_refused():
    with pytest.raises(RedisUrlError, match="absolute path"):
        unix_socket_url("var/redis/redis.sock", "pw")


def test_a_socket_path_longer_than_a_socket_address_holds():
    fits = "/" + "v" * (MAX_UNIX_SOCKET_PATH_BYTES - 1)
    assert not unix_socket_path_too_long(fits)
    assert unix_socket_path_too_long(fits + "v")
    assert unix_socket_path_too_long("/" + "é" * 54)  # bytes count, not characters
