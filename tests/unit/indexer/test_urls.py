"""The url facts every app shares (indexer.core.urls): a url's host, the seed's company level
domain (one rule for the scheduler's host budgets and search's url bonuses), url hashes."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.core.ids import hash8
from indexer.core.text import TextAnalyzer
from indexer.core.urls import as_hash_array, company_level_domain, hashes_of, host_of, url_hash
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
