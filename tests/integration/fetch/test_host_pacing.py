"""Request slots of crawl-delayed hosts in a real Redis (``crawler.machines.host_pacing``): the
fetchers of several crawls asking one host at once get slots a delay apart, another host is not
held up, and without Redis a request goes ahead at once."""

from __future__ import annotations

import threading

import pytest
import redis

from crawler.machines.host_pacing import RedisHostPacer
from operations.redis_urls import redis_url_for

pytestmark = pytest.mark.redis


def test_fetchers_asking_one_host_get_slots_a_delay_apart(redis_url) -> None:
    client = redis.Redis.from_url(redis_url_for(redis_url, db=6), decode_responses=True)
    client.delete("yioopy:pace:slow.example", "yioopy:pace:other.example")
    pacers = [RedisHostPacer(client) for _ in range(4)]  # four fetcher processes
    slots: list[float] = []
    lock = threading.Lock()

    def ask(pacer: RedisHostPacer) -> None:
        for _ in range(5):
            at = pacer.reserve("slow.example", 2.5, 1000.0)
            with lock:
                slots.append(at)

    threads = [threading.Thread(target=ask, args=(p,)) for p in pacers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(slots) == [1000.0 + 2.5 * i for i in range(20)]
    assert pacers[0].reserve("other.example", 2.5, 1000.0) == 1000.0
    # a request long after the last slot is not held back
    assert pacers[1].reserve("slow.example", 2.5, 2000.0) == 2000.0
    assert 0 < client.pttl("yioopy:pace:slow.example") <= 60_000


def test_without_redis_a_request_goes_ahead() -> None:
    pacer = RedisHostPacer(redis.Redis(unix_socket_path="/nonexistent/redis.sock",
                                       socket_timeout=0.5, socket_connect_timeout=0.5))
    assert pacer.reserve("slow.example", 2.0, 5.0) == 5.0
