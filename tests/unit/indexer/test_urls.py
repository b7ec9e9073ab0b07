"""The url facts every app shares (indexer.core.urls): a url's host, the seed's company level
domain (one rule for the scheduler's host budgets and search's url bonuses), url hashes, and the
queue server that owns a url. Hashes and owners are pinned to known values: stored indexes and
the queue-server assignment of existing crawls depend on them."""

from __future__ import annotations

import hashlib
from collections import Counter
from urllib.parse import urlsplit

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.ids import hash8
from indexer.core.text import TextAnalyzer
from indexer.core.urls import (
    as_hash_array,
    company_level_domain,
    hashes_from_halves,
    hashes_of,
    host_of,
    md5_halves,
    registered_domain,
    server_of_host,
    server_of_url,
    url_hash,
    url_host,
)
from ranking.core.scoring.formulas import url_items


@pytest.mark.parametrize(("host", "cld"), [
    ("www.yahoo.co.uk", "yahoo.co.uk"),
    ("yahoo.co.uk", "yahoo.co.uk"),
    ("a.b.yahoo.co.uk", "yahoo.co.uk"),
    ("www.yahoo.com", "yahoo.com"),
    ("yahoo.com", "yahoo.com"),
    ("deep.sub.yahoo.com", "yahoo.com"),
    ("www.abc.com.au", "com.au"),      # the seed's rule: only 2chars.2chars keeps 3 labels
    ("WWW.Example.ORG.", "example.org"),
    ("example.com:8080", "example.com"),
    ("localhost", "localhost"),
    ("127.0.0.1", "127.0.0.1"),
])
def test_company_level_domain(host: str, cld: str) -> None:
    assert company_level_domain(host) == cld


def test_company_level_domain_of_search_hosts():
    assert company_level_domain("www.yahoo.co.uk") == "yahoo.co.uk"
    assert company_level_domain("www.yahoo.com") == "yahoo.com"
    assert company_level_domain("a.b.example.org") == "example.org"


@pytest.mark.parametrize("host, domain", [
    ("www.abc.com.au", "abc.com.au"),          # the seed's CLD would say com.au
    ("docs.python.org", "python.org"),
    ("Docs.Python.ORG.", "python.org"),
    ("a.b.user.github.io", "user.github.io"),  # a private suffix: each user owns a domain
    ("s7.farm.example", "farm.example"),
    ("www.yahoo.co.uk", "yahoo.co.uk"),
    ("localhost", "localhost"),
    ("github.io", "github.io"),                # a public suffix is its own domain
    ("127.0.0.1", "127.0.0.1"),
    ("[::1]", "[::1]"),
    ("", ""),
])
def test_registered_domain_by_the_public_suffix_list(host: str, domain: str) -> None:
    assert registered_domain(host) == domain


def test_url_facts_from_the_crawler():
    assert company_level_domain("www.yahoo.co.uk") == "yahoo.co.uk"
    assert company_level_domain("www.yahoo.com") == "yahoo.com"


def test_an_ip_host_is_its_own_cld_but_earns_no_cld_url_bonus():
    assert company_level_domain("::1") == "::1"
    assert company_level_domain("[::1]:8080") == "[::1]:8080"
    assert company_level_domain("10.0.0.1:80") == "10.0.0.1"
    items = url_items("http://127.0.0.1/", "", TextAnalyzer(), "en")
    assert items.is_root and not items.is_cld
    assert url_items("https://www.example.org/", "", TextAnalyzer(), "en").is_cld


def test_host_of():
    assert host_of("https://Docs.Python.org:8080/3/") == "docs.python.org"
    assert host_of("http://example.com./a") == "example.com"
    assert host_of("mailto:someone@example.com") == ""
    assert host_of("http://[::1/") == ""  # unparsable: no host rather than an error


def test_url_hashes_are_the_doc_id_prefix():
    urls = ["https://a.org/", "https://b.org/x"]
    hashes = hashes_of(urls)
    assert hashes.dtype == np.uint64
    assert hashes.tolist() == [url_hash(u) for u in urls]
    assert url_hash(urls[0]) == int.from_bytes(hash8(urls[0]), "big")
    as_bytes = np.array([hash8(u) for u in urls], dtype="S8")
    assert as_hash_array(as_bytes).tolist() == hashes.tolist()
    with pytest.raises(ValueError):
        as_hash_array(np.zeros((2, 4), dtype=np.uint8))


@pytest.mark.parametrize(("url", "spelled", "host"), [
    ("https://example.com/", "example.com", "example.com"),
    ("HTTP://Docs.Python.ORG/3/", "docs.python.org", "docs.python.org"),     # uppercase
    ("http://example.com:8080/a", "example.com", "example.com"),              # port
    ("http://user:secret@a.b.org:8080/p", "a.b.org", "a.b.org"),              # userinfo
    ("http://u@Example.COM./x", "example.com.", "example.com"),               # trailing dot
    ("http://[2001:DB8::1]:80/", "2001:db8::1", "2001:db8::1"),               # IPv6 literal
    ("http://127.1.2.3/", "127.1.2.3", "127.1.2.3"),                      # IPv4 literal
    ("mailto:someone@example.com", "", ""),
    ("/relative/path", "", ""),
    ("file.warc#12", "", ""),
    ("", "", ""),
])
def test_url_host_and_host_of(url: str, spelled: str, host: str) -> None:
    assert url_host(url) == spelled
    assert host_of(url) == host


def test_a_malformed_url_raises_in_url_host_but_not_in_host_of():
    with pytest.raises(ValueError):
        url_host("http://[::1/")
    assert host_of("http://[::1/") == ""


@pytest.mark.parametrize(("url", "owners"), [
    # (url, its owner among 2, 3, 5, 7 queue servers): the values of the crawls on disk
    ("https://example.com/", [1, 1, 1, 6]),
    ("http://Example.COM./x", [1, 2, 0, 0]),       # a trailing dot is part of the owned host
    ("http://user:pw@a.b.org:8080/p", [0, 0, 2, 0]),
    ("http://[2001:db8::1]:80/", [0, 2, 3, 0]),
    ("http://127.1.2.3/", [0, 1, 3, 0]),
    ("file.warc#12", [1, 2, 1, 6]),                # no host: the owner of ''
])
def test_the_owner_of_a_url_is_pinned(url: str, owners: list[int]) -> None:
    assert [server_of_url(url, n) for n in (2, 3, 5, 7)] == owners
    assert server_of_url(url, 1) == 0


def test_ownership_is_by_host_stable_and_spreads_hosts():
    assert server_of_host("Example.COM", 4) == server_of_host("example.com", 4)
    assert server_of_url("https://A.example/x", 4) == server_of_url("http://a.example:81/y", 4)
    assert all(server_of_host(f"h{i}.com", 1) == 0 for i in range(50))
    counts = Counter(server_of_host(f"host{i}.example", 3) for i in range(3000))
    assert set(counts) == {0, 1, 2} and min(counts.values()) > 800
    with pytest.raises(ValueError):
        server_of_host("a.com", 0)


@pytest.mark.parametrize(("url", "value"), [
    ("https://example.com/", 12050708365516732942),
    ("http://Example.COM./x", 18291387629643381827),
    ("http://user:pw@a.b.org:8080/p", 8275344385840781869),
    ("https://\u00e9t\u00e9.fr/\udcff", 596433769300626353),   # non-ASCII, a lone surrogate
    ("", 4439851323553804410),
    ("file.warc#12", 2728120340446227476),
])
def test_the_url_hash_is_pinned(url: str, value: int) -> None:
    assert url_hash(url) == value
    assert hashes_of([url]).tolist() == [value]
    assert hashes_from_halves(md5_halves([url])).tolist() == [value]


def test_md5_halves_are_the_two_big_endian_halves():
    urls = ["https://a.org/", "https://b.org/\u00e9"]
    halves = md5_halves(urls)
    assert halves.shape == (2, 2) and halves.dtype == np.uint64
    for row, url in zip(halves.tolist(), urls, strict=True):
        digest = hashlib.md5(url.encode()).digest()
        assert row == [int.from_bytes(digest[:8], "big"), int.from_bytes(digest[8:], "big")]
    assert md5_halves([]).shape == (0, 2) and hashes_of([]).tolist() == []


_URL_PARTS = st.sampled_from(["http", "https", "HTTP", "ftp", "javascript", "h\tttp", " http",
                              "", "mailto"])
_NETLOC_CHARS = st.sampled_from(list("abcXYZ09.-_~%!$&'()*+,;=") + ["@", ":", "[", "]", " ",
                                "\t", "\n", "\x01", "\x7f", "ß", "\uff03", "\u2100", "é", "\\"])


@settings(max_examples=400, deadline=None)
@given(scheme=_URL_PARTS, slashes=st.sampled_from(["://", ":/", ":", "//", ""]),
       netloc=st.lists(_NETLOC_CHARS, max_size=14).map("".join),
       rest=st.sampled_from(["", "/", "/a/b.html", "?q=1", "#f", "/x\ny", "/a@b:c", "\n"]))
def test_url_host_is_urlsplits_hostname(scheme: str, slashes: str, netloc: str,
                                        rest: str) -> None:
    """The regular expression path gives exactly what urlsplit gives, ValueError included."""
    url = f"{scheme}{slashes}{netloc}{rest}"
    try:
        expected: object = urlsplit(url).hostname or ""
    except ValueError:
        expected = ValueError
    try:
        got: object = url_host(url)
    except ValueError:
        got = ValueError
    assert got == expected, url
