"""The fetcher against real fixture servers on loopback: limits, errors, redirects, pools."""

from __future__ import annotations

import gzip
import threading
import time
import tracemalloc

import pytest

from crawler.core.http import (
    BadResponse,
    ConnectionFailed,
    DeadlineExceeded,
    DnsError,
    EgressRefused,
    Fetcher,
    FetchRequest,
    HeadersTooLarge,
    ReadTimeout,
    RedirectHop,
    RedirectLoop,
    TooManyRedirects,
    fetch_batch,
)
from tests.fixtures.sites import FixtureServer, Router, hostile_router, max_overlap, normal_site

from .conftest import loopback_config

MB = 1024 * 1024


def fetch_one(server_url: str, **config: object):
    with Fetcher(loopback_config(**config)) as fetcher:
        return fetcher.fetch(FetchRequest(server_url))


def bounded(fn, *args, **kwargs):
    """Run fn, returning (result, seconds, peak traced bytes)."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        result = fn(*args, **kwargs)
    finally:
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return result, elapsed, peak


# -- ordinary pages ------------------------------------------------------------------------------

def test_normal_page_headers_and_request_shape(server: FixtureServer) -> None:
    result = fetch_one(server.url("/etag"), user_agent="yioopy-test/1.0", byte_range=5000)
    assert result.ok and result.status == 200 and result.error is None
    assert result.content_type == "text/html"
    assert b"versioned page" in result.body and not result.truncated
    assert result.etag == '"v1"' and result.last_modified and result.expires
    assert result.expires_at == pytest.approx(2114380800.0)
    assert result.ip == "127.0.0.1" and result.final_url == result.url
    assert all(name == name.lower() for name in result.headers)
    (entry,) = server.requests_for("/etag")
    assert entry.headers["range"] == "bytes=0-4999"
    assert entry.headers["user-agent"] == "yioopy-test/1.0"
    assert entry.headers["accept-encoding"] == "gzip, deflate"


def test_conditional_request_gets_304_as_a_result(server: FixtureServer) -> None:
    with Fetcher(loopback_config()) as fetcher:
        result = fetcher.fetch(FetchRequest(server.url("/etag"), etag='"v1"'))
    assert result.status == 304 and result.not_modified and result.error is None
    assert result.body == b""
    assert server.requests_for("/etag")[0].headers["if-none-match"] == '"v1"'


@pytest.mark.parametrize("code", [404, 500, 503])
def test_error_statuses_are_results(server: FixtureServer, code: int) -> None:
    result = fetch_one(server.url(f"/status/{code}"))
    assert result.error is None and result.status == code and not result.ok
    assert f"answers {code}".encode() in result.body


def test_416_is_retried_without_range(server: FixtureServer) -> None:
    result = fetch_one(server.url("/range-416"))
    assert result.ok and b"no ranges" in result.body
    first, second = server.requests_for("/range-416")
    assert "range" in first.headers and "range" not in second.headers


def test_small_gzip_page_is_decoded(server: FixtureServer) -> None:
    result = fetch_one(server.url("/gzip-page"))
    assert result.ok and result.body.startswith(b"<!DOCTYPE html>")
    assert result.headers["content-encoding"] == "gzip"


def test_normal_site_robots_sitemaps_and_pages() -> None:
    site = normal_site("alpha", pages=4)
    with FixtureServer(site.route) as srv:
        urls = [srv.url(p) for p in ["/robots.txt", "/sitemap.xml", "/sitemap.xml.gz",
                                     *site.allowed_paths]]
        results = fetch_batch(urls, loopback_config())
    robots, sitemap, sitemap_gz, *pages = results
    assert b"Disallow: /private/" in robots.body and b"Crawl-delay: 1" in robots.body
    assert b"<urlset" in sitemap.body and b"/orphan-0.html" in sitemap.body
    # a gzipped file (not a gzip Content-Encoding) stays as it came
    assert b"/orphan-1.html" in gzip.decompress(sitemap_gz.body)
    for path, page in zip(site.allowed_paths, pages, strict=True):
        assert page.ok and site.pages[path].word.encode() in page.body


def test_bad_urls_and_dns_failures_are_values() -> None:
    def resolver(host: str, port: int) -> list[str]:
        raise DnsError(f"cannot resolve host {host}")
    with Fetcher(loopback_config(), resolver=resolver) as fetcher:
        results = fetcher.fetch_many(["ftp://example.test/", "http:///nohost", "not a url",
                                      "http://nowhere.invalid/", "http://[::1/"])
    kinds = [r.error.kind for r in results]  # type: ignore[union-attr]
    assert kinds == ["invalid_url", "invalid_url", "invalid_url", "dns", "invalid_url"]
    assert results[3].error.retryable  # type: ignore[union-attr]


def test_hanging_dns_is_bounded() -> None:
    release = threading.Event()

    def resolver(host: str, port: int) -> list[str]:
        release.wait(10)
        return ["127.0.0.1"]
    try:
        with Fetcher(loopback_config(connect_timeout=0.5), resolver=resolver) as fetcher:
            started = time.monotonic()
            result = fetcher.fetch("http://hangs.test/")
            elapsed = time.monotonic() - started
    finally:
        release.set()
    assert isinstance(result.error, DnsError) and result.error.retryable
    assert 0.4 <= elapsed < 2.0, elapsed


def test_connection_refused_is_retryable_value() -> None:
    with FixtureServer(hostile_router()) as srv:
        port = srv.port
    result = fetch_one(f"http://127.0.0.1:{port}/")
    assert isinstance(result.error, ConnectionFailed) and result.error.retryable


# -- egress ---------------------------------------------------------------------------------------

def test_egress_refuses_loopback_when_not_allowed(server: FixtureServer) -> None:
    config = loopback_config(allowed_networks=("public", "10.0.0.0/8"))
    results = fetch_batch([server.url("/etag"), f"http://localhost:{server.port}/etag",
                           f"http://[::1]:{server.port}/", "http://[::ffff:127.0.0.1]/"],
                          config)
    for result in results:
        assert isinstance(result.error, EgressRefused), result
        assert not result.error.retryable and result.ip is None
    assert "127.0.0.1" in results[0].error.message
    assert "localhost" in results[1].error.message  # names the host and its address
    assert server.log == []  # not one connection reached the server


def test_host_override_is_vetted_too(server: FixtureServer) -> None:
    config = loopback_config(allowed_networks=("public",),
                             host_overrides={"www.example.test": "127.0.0.1"})
    result = fetch_batch([server.url("/", hostname="www.example.test")], config)[0]
    assert isinstance(result.error, EgressRefused)
    assert result.error.host == "www.example.test"
    assert result.error.addresses == ("127.0.0.1",)


def test_redirect_to_a_refused_address_is_refused(server: FixtureServer) -> None:
    # the fixture is on 127.0.0.1 and allowed; the redirect points at 127.0.0.2, which is not
    config = loopback_config(allowed_networks=("127.0.0.1/32",))
    target = f"http://127.0.0.2:{server.port}/etag"
    result = fetch_one(server.url(f"/redirect/to?url={target}"),
                       allowed_networks=config.allowed_networks)
    assert isinstance(result.error, EgressRefused) and "127.0.0.2" in result.error.message
    assert result.redirects == (RedirectHop(server.url(f"/redirect/to?url={target}"), target,
                                            302),)
    assert result.final_url == target
    assert [e.path for e in server.log] == [f"/redirect/to?url={target}"]


def test_dns_rebinding_cannot_switch_the_address(server: FixtureServer) -> None:
    """The resolver answers an allowed address once, then a refused one: the connection goes
    to the address that was vetted, and the next connection is refused."""
    answers = iter([["127.0.0.1"], ["10.1.2.3"]])

    def resolver(host: str, port: int) -> list[str]:
        return next(answers)
    config = loopback_config(allowed_networks=("127.0.0.1/32",))
    with Fetcher(config, resolver=resolver) as fetcher:
        first = fetcher.fetch(server.url("/status/200", hostname="rebind.test"))
        second = fetcher.fetch(server.url("/redirect/loop/a", hostname="other.test"))
    assert first.ok and first.ip == "127.0.0.1"
    assert isinstance(second.error, EgressRefused)


def test_mixed_answers_connect_only_to_allowed_address(server: FixtureServer) -> None:
    def resolver(host: str, port: int) -> list[str]:
        return ["10.9.9.9", "::ffff:127.0.0.1"]
    config = loopback_config(allowed_networks=("127.0.0.0/8",))
    with Fetcher(config, resolver=resolver) as fetcher:
        result = fetcher.fetch(server.url("/status/200", hostname="mixed.test"))
    assert result.ok and result.ip == "127.0.0.1"


# -- byte limits ----------------------------------------------------------------------------------

def test_50mb_body_ignoring_range_is_cut_cheaply(server: FixtureServer) -> None:
    result, seconds, peak = bounded(fetch_one, server.url("/big?mb=50"), byte_range=1_000_000)
    assert result.error is None and result.status == 200
    assert len(result.body) == 1_000_000 and result.truncated
    assert seconds < 3.0, seconds
    assert peak < 8 * MB, peak


def test_range_honoured_gives_206_truncated(server: FixtureServer) -> None:
    result = fetch_one(server.url("/big/range?mb=50"), byte_range=100_000)
    assert result.status == 206 and len(result.body) == 100_000 and result.truncated
    assert server.log[0].headers["range"] == "bytes=0-99999"


def test_a_206_holding_the_whole_body_is_reported_as_200(server: FixtureServer) -> None:
    """Issue 39: every fetch was shown and archived as HTTP 206 (the byte cap's Range header)
    although the whole page had come; a 206 of a longer resource stays a truncated 206."""
    result = fetch_one(server.url("/big/range?mb=1"), byte_range=2 * MB)
    assert server.log[0].headers["range"] == f"bytes=0-{2 * MB - 1}"
    assert (result.status, len(result.body), result.truncated) == (200, MB, False)
    assert "content-range" not in result.headers and result.ok


def test_chunked_body_is_cut(server: FixtureServer) -> None:
    result = fetch_one(server.url("/chunked?kb=3000"), byte_range=500_000)
    assert result.error is None and len(result.body) == 500_000 and result.truncated
    small = fetch_one(server.url("/chunked?kb=10"), byte_range=500_000)
    assert len(small.body) == 10 * 1024 and not small.truncated


def test_gzip_bomb_is_cut_at_the_byte_limit(server: FixtureServer) -> None:
    result, seconds, peak = bounded(fetch_one, server.url("/gzip-bomb?gb=10"),
                                    byte_range=1_000_000)
    assert result.error is None and result.truncated
    assert len(result.body) == 1_000_000 and result.body == bytes(1_000_000)
    assert seconds < 3.0, seconds
    assert peak < 8 * MB, peak


def test_corrupt_gzip_is_a_bad_response() -> None:
    from tests.fixtures.sites import Response

    router = Router().add("/", lambda r: Response(200, b"\x1f\x8bnot really gzip at all",
                                                  {"Content-Encoding": "gzip"}))
    with FixtureServer(router) as srv:
        result = fetch_one(srv.url("/"))
    assert isinstance(result.error, BadResponse)


# -- time bounds ----------------------------------------------------------------------------------

def test_trickle_is_bounded_by_the_page_deadline(server: FixtureServer) -> None:
    # one byte every 0.2 s never trips the 1.5 s read timeout; the 2 s deadline ends it
    result, seconds, _ = bounded(fetch_one, server.url("/trickle?interval=0.2&size=100000"))
    assert isinstance(result.error, DeadlineExceeded), result.error
    assert 1.9 <= seconds < 3.5, seconds


def test_one_byte_a_second_is_bounded(server: FixtureServer) -> None:
    result, seconds, _ = bounded(fetch_one, server.url("/trickle?interval=1&size=100"),
                                 page_deadline=2.5, read_timeout=2.0)
    assert isinstance(result.error, DeadlineExceeded)
    assert seconds < 4.2, seconds


def test_trickled_headers_are_bounded(server: FixtureServer) -> None:
    result, seconds, _ = bounded(fetch_one, server.url("/trickle-headers?interval=0.1"))
    assert isinstance(result.error, DeadlineExceeded), result.error
    assert 1.9 <= seconds < 3.5, seconds


def test_endless_headers_are_cut(server: FixtureServer) -> None:
    result, seconds, peak = bounded(fetch_one, server.url("/endless-headers"))
    assert isinstance(result.error, HeadersTooLarge), result.error
    assert seconds < 2.0 and peak < 4 * MB


def test_slow_endless_headers_end_at_the_deadline(server: FixtureServer) -> None:
    result, seconds, _ = bounded(fetch_one, server.url("/endless-headers?interval=0.05"),
                                 max_header_count=100)
    assert isinstance(result.error, HeadersTooLarge | DeadlineExceeded), result.error
    assert seconds < 3.5, seconds


def test_header_bytes_limit(server: FixtureServer) -> None:
    result = fetch_one(server.url("/etag"), max_header_bytes=60)
    assert isinstance(result.error, HeadersTooLarge)


def test_slow_host_read_timeout_and_deadline(server: FixtureServer) -> None:
    result, seconds, _ = bounded(fetch_one, server.url("/slow?stall=5"), read_timeout=1.0)
    assert isinstance(result.error, ReadTimeout) and result.error.retryable
    assert 0.9 <= seconds < 2.5
    result, seconds, _ = bounded(fetch_one, server.url("/slow?stall=5"), read_timeout=2.0,
                                 page_deadline=2.5)
    assert isinstance(result.error, ReadTimeout | DeadlineExceeded)
    assert seconds < 3.5
    ok = fetch_one(server.url("/slow?stall=0.3"))
    assert ok.ok


def test_hostile_batch_holds_no_worker_past_the_deadline(server: FixtureServer) -> None:
    urls = [server.url(p) for p in ("/trickle?interval=0.5&size=1000", "/trickle-headers",
                                    "/endless-headers", "/endless-headers?interval=0.2",
                                    "/slow?stall=30", "/big?mb=50", "/gzip-bomb?gb=50",
                                    "/redirect/loop/a", "/status/500", "/etag")]
    started = time.monotonic()
    results = fetch_batch(urls, loopback_config(page_deadline=2.0, read_timeout=1.5))
    elapsed = time.monotonic() - started
    assert elapsed < 3.8, elapsed
    assert results[-1].ok and results[-2].status == 500
    assert all(r.elapsed < 3.5 for r in results)


# -- redirects ------------------------------------------------------------------------------------

def test_redirect_chain_is_recorded(server: FixtureServer) -> None:
    result = fetch_one(server.url("/redirect/chain/4"))
    assert result.ok and result.final_url == server.url("/redirect/chain/0")
    assert [(h.source.rsplit("/", 1)[1], h.target.rsplit("/", 1)[1], h.status)
            for h in result.redirects] == [("4", "3", 302), ("3", "2", 301), ("2", "1", 302),
                                           ("1", "0", 301)]
    assert result.location_links[0] == (server.url("/redirect/chain/4"),
                                        server.url("/redirect/chain/3"))


def test_too_many_redirects(server: FixtureServer) -> None:
    result = fetch_one(server.url("/redirect/chain/7"), max_redirects=5)
    assert isinstance(result.error, TooManyRedirects)
    assert len(result.redirects) == 6 and len(server.log) == 6
    assert fetch_one(server.url("/redirect/chain/5"), max_redirects=5).ok


def test_redirect_loop_is_detected(server: FixtureServer) -> None:
    result = fetch_one(server.url("/redirect/loop/a"))
    assert isinstance(result.error, RedirectLoop) and not result.error.retryable
    assert [h.status for h in result.redirects] == [302, 302]
    assert len(server.log) == 2


def test_redirect_to_other_host_uses_that_hosts_pool() -> None:
    with FixtureServer(hostile_router(), host="127.0.0.2", name="b") as b, \
            FixtureServer(hostile_router(), host="127.0.0.3", name="c") as c:
        config = loopback_config(host_overrides={"b.test": "127.0.0.2", "c.test": "127.0.0.3"})
        target = c.url("/etag", hostname="c.test")
        result = fetch_batch([b.url(f"/redirect/to?url={target}&code=301",
                                    hostname="b.test")], config)[0]
        assert result.ok and result.final_url == target and result.ip == "127.0.0.3"
        assert c.log[0].headers["host"] == f"c.test:{c.port}"


# -- concurrency and connection reuse ----------------------------------------------------------

def test_per_host_concurrency_cap_and_overall_parallelism() -> None:
    with FixtureServer(hostile_router(), host="127.0.0.2", name="a") as a, \
            FixtureServer(hostile_router(), host="127.0.0.3", name="b") as b:
        urls = [srv.url(f"/hold?seconds=0.2&i={i}") for i in range(24) for srv in (a, b)]
        started = time.monotonic()
        results = fetch_batch(urls, loopback_config(concurrency=32, per_host_concurrency=4))
        elapsed = time.monotonic() - started
        assert all(r.ok for r in results)
        for srv in (a, b):
            assert srv.peak_concurrency <= 4 and max_overlap(srv.log) <= 4
            assert srv.peak_concurrency == 4  # the cap is also used
        # 24 pages per host, 4 at a time, 0.2 s each: about 1.2 s, hosts in parallel
        assert 1.1 <= elapsed < 3.5, elapsed


def test_connections_are_reused_per_host() -> None:
    site = normal_site("reuse", pages=30)
    with FixtureServer(site.route) as srv:
        urls = [srv.url(p) for p in site.allowed_paths]
        with Fetcher(loopback_config(concurrency=8, per_host_concurrency=2)) as fetcher:
            first = fetcher.fetch_many(urls)
            second = fetcher.fetch_many(urls)
        assert all(r.ok for r in first + second)
        assert len(srv.log) == 2 * len(urls)
        assert srv.connections <= 4, srv.connections  # 2 slots, maybe one redial each


def test_fetch_many_from_several_threads(server: FixtureServer) -> None:
    out: list[int] = []
    with Fetcher(loopback_config()) as fetcher:
        def work() -> None:
            out.extend(r.status for r in fetcher.fetch_many([server.url("/status/200")] * 5))
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert out == [200] * 20


def test_closed_fetcher_refuses_work(server: FixtureServer) -> None:
    fetcher = Fetcher(loopback_config())
    fetcher.close()
    fetcher.close()
    with pytest.raises(RuntimeError):
        fetcher.fetch_many([server.url("/")])
