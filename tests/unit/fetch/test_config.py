"""FetchConfig validation and defaults; the TLS context it implies."""

from __future__ import annotations

import pickle
import ssl
from pathlib import Path

import pytest

from crawler.core.http import (
    ERROR_KINDS,
    EgressRefused,
    FetchConfig,
    FetchConfigError,
    FetchError,
    FetchResult,
    RedirectHop,
    TooManyRedirects,
)
from crawler.core.http.client import check_url, normalize_url
from crawler.core.http.transport import make_ssl_context


def test_defaults_are_the_seeds() -> None:
    config = FetchConfig()
    assert config.allowed_networks == ("public",)
    assert config.byte_range == 1_000_000 and config.read_timeout == 10
    assert config.page_deadline == 30 and config.connect_timeout == 5
    assert config.max_redirects == 5 and config.concurrency == 100
    assert config.per_host_concurrency == 8 and config.accept_encoding == ("gzip", "deflate")
    assert config.egress.allow_public and not config.egress.networks


def test_frozen() -> None:
    config = FetchConfig()
    with pytest.raises(AttributeError):
        config.byte_range = 5  # type: ignore[misc]


@pytest.mark.parametrize("kwargs", [
    {"allowed_networks": ()}, {"allowed_networks": "public"},
    {"allowed_networks": ("10.0.0.0/99",)}, {"byte_range": 0}, {"byte_range": -1},
    {"concurrency": 0}, {"per_host_concurrency": 0}, {"connect_timeout": 0},
    {"read_timeout": -1.0}, {"page_deadline": 0}, {"max_redirects": -1},
    {"max_header_count": 0}, {"max_header_count": 101}, {"max_header_bytes": 0},
    {"user_agent": ""}, {"user_agent": "a\r\nX-Injected: 1"}, {"accept_encoding": ("br",)},
    {"host_overrides": {"a.test": "not-an-ip"}}, {"ca_bundle": ""}, {"ca_bundle": "  "},
    {"byte_range": True},
])
def test_invalid(kwargs: dict[str, object]) -> None:
    with pytest.raises(FetchConfigError):
        FetchConfig(**kwargs)  # type: ignore[arg-type]


def test_host_overrides_are_normalised_and_read_only() -> None:
    config = FetchConfig(host_overrides={"WWW.Example.Test.": "127.0.0.2"})
    assert dict(config.host_overrides) == {"www.example.test": "127.0.0.2"}
    with pytest.raises(TypeError):
        config.host_overrides["x"] = "1.2.3.4"  # type: ignore[index]


def test_ssl_context_verifies_and_adds_the_bundle(tmp_path: Path) -> None:
    plain = make_ssl_context(None)
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    from tests.fixtures.sites import make_tls_files

    files = make_tls_files(tmp_path)
    extended = make_ssl_context(str(files.ca_cert))
    assert extended.verify_mode == ssl.CERT_REQUIRED and extended.check_hostname
    # the bundle is added to the system store, not used instead of it
    assert extended.cert_store_stats()["x509_ca"] == plain.cert_store_stats()["x509_ca"] + 1


def test_errors_are_values_that_survive_pickling() -> None:
    error = EgressRefused("refused", url="http://x/", host="x", addresses=("10.0.0.1",))
    copy = pickle.loads(pickle.dumps(error))
    assert copy == error and copy.host == "x" and copy.addresses == ("10.0.0.1",)
    assert ERROR_KINDS["too_many_redirects"] is TooManyRedirects
    assert all(issubclass(cls, FetchError) for cls in ERROR_KINDS.values())
    assert len(set(ERROR_KINDS)) == len(ERROR_KINDS)


def test_result_properties() -> None:
    result = FetchResult(url="http://a/", final_url="http://b/", status=200,
                         headers={"etag": '"x"', "expires": "garbage"},
                         redirects=(RedirectHop("http://a/", "http://b/", 301),))
    assert result.ok and result.etag == '"x"' and result.expires_at is None
    assert result.location_links == (("http://a/", "http://b/"),)
    assert not FetchResult(url="u", final_url="u", status=304).ok


def test_check_url() -> None:
    assert check_url("HTTP://Example.com#frag") == "http://Example.com/"
    assert check_url("https://a.test/x?y=1") == "https://a.test/x?y=1"
    for bad in ("ftp://a/", "http://", "javascript:alert(1)", "http://a:99999/", "http://a/ b",
                "http://a:0/"):
        with pytest.raises(FetchError):
            check_url(bad)
    assert normalize_url("http://A.test/p#x") == normalize_url("http://a.test/p")
