"""HTTPS: verification against the system store plus ``ca_bundle``, never switched off."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crawler.core.http import Fetcher, Misconfigured, TlsError, fetch_batch
from crawler.machines.fetching import _FetcherCache
from tests.fixtures.sites import FixtureServer, TlsFiles, hostile_router

from .conftest import loopback_config

OVERRIDES = {"www.fixture.test": "127.0.0.1", "wrong.test": "127.0.0.1"}


@pytest.fixture(scope="module")
def https(tls_files: TlsFiles) -> Iterator[FixtureServer]:
    with FixtureServer(hostile_router(), ssl_context=tls_files.server_context(),
                       name="https") as server:
        yield server


def test_self_signed_ca_is_refused_without_ca_bundle(https: FixtureServer) -> None:
    result = fetch_batch([https.url("/etag", hostname="www.fixture.test")],
                         loopback_config(host_overrides=OVERRIDES))[0]
    assert isinstance(result.error, TlsError) and not result.error.retryable
    assert "certificate" in result.error.message.lower()
    assert result.status == 0 and result.body == b""


def test_accepted_with_ca_bundle(https: FixtureServer, tls_files: TlsFiles) -> None:
    config = loopback_config(host_overrides=OVERRIDES, ca_bundle=str(tls_files.ca_cert))
    with Fetcher(config) as fetcher:
        results = fetcher.fetch_many([https.url("/etag", hostname="www.fixture.test"),
                                      https.url("/status/404", hostname="www.fixture.test"),
                                      https.url("/gzip-page"),  # IP SAN 127.0.0.1
                                      https.url("/big?mb=50", hostname="www.fixture.test")])
    etag, missing, by_ip, big = results
    assert etag.ok and b"versioned page" in etag.body and etag.ip == "127.0.0.1"
    assert missing.status == 404 and missing.error is None
    assert by_ip.ok and by_ip.body.startswith(b"<!DOCTYPE html>")
    assert big.error is None and len(big.body) == config.byte_range and big.truncated
    assert https.requests_for("/etag")[-1].headers["host"] == f"www.fixture.test:{https.port}"


def test_hostname_mismatch_is_refused(https: FixtureServer, tls_files: TlsFiles) -> None:
    config = loopback_config(host_overrides=OVERRIDES, ca_bundle=str(tls_files.ca_cert))
    result = fetch_batch([https.url("/etag", hostname="wrong.test")], config)[0]
    assert isinstance(result.error, TlsError)
    assert "wrong.test" in result.error.message or "match" in result.error.message.lower()


def test_tls_trickle_is_bounded_by_the_deadline(https: FixtureServer,
                                                tls_files: TlsFiles) -> None:
    config = loopback_config(host_overrides=OVERRIDES, ca_bundle=str(tls_files.ca_cert),
                             page_deadline=2.0, read_timeout=1.5)
    result = fetch_batch([https.url("/trickle?interval=0.2&size=1000",
                                    hostname="www.fixture.test")], config)[0]
    assert result.error is not None and result.error.kind == "deadline"
    assert result.elapsed < 3.5


def test_plain_http_to_a_tls_port_is_an_error_value(https: FixtureServer) -> None:
    result = fetch_batch([f"http://127.0.0.1:{https.port}/"],
                         loopback_config(page_deadline=2.0, read_timeout=1.0))[0]
    assert result.error is not None


@pytest.mark.parametrize("spoil", ["garbage", "missing", "folder"])
def test_a_ca_bundle_that_cannot_be_loaded_fails_every_fetch_as_configuration(
        https: FixtureServer, hostile: FixtureServer, tmp_path, spoil: str) -> None:
    # issue 39, item 2: the bundle checked at start-up, then spoilt; building a Fetcher raised
    # (every schedule of the fetcher process failed and was handed out again, without end)
    bundle = tmp_path / "ca.pem"
    if spoil == "garbage":
        bundle.write_text("not a certificate\n")
    elif spoil == "folder":
        bundle.mkdir()
    config = loopback_config(host_overrides=OVERRIDES, ca_bundle=str(bundle))
    with Fetcher(config) as fetcher:
        assert fetcher.misconfigured and str(bundle) in fetcher.misconfigured
        results = fetcher.fetch_many([https.url("/etag", hostname="www.fixture.test"),
                                      hostile.url("/etag")])
    for result in results:
        assert isinstance(result.error, Misconfigured), result.error
        assert result.error.kind == "configuration" and not result.error.retryable
        assert f"the CA bundle '{bundle}' cannot be loaded" in result.error.message
        assert result.status == 0 and result.ip is None  # nothing was connected to


@pytest.mark.django_db
def test_the_fetcher_process_builds_its_fetchers_again_once_the_bundle_is_fixed(
        tls_files: TlsFiles, tmp_path, settings) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n")
    config = loopback_config(host_overrides=OVERRIDES, ca_bundle=str(bundle))
    cache = _FetcherCache()
    try:
        spoilt, _hop = cache.get(config)
        assert spoilt.misconfigured
        assert cache.get(config)[0] is not spoilt  # still spoilt: tried again, not kept
        bundle.write_bytes(tls_files.ca_cert.read_bytes())
        fixed, _hop = cache.get(config)
        assert fixed.misconfigured is None and cache.get(config)[0] is fixed
    finally:
        cache.close()
