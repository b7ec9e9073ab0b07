from __future__ import annotations

from crawler.core.urls import (
    canonicalize,
    domain_suffixes,
    file_extension,
    is_recursive,
    levenshtein,
    path_prefixes,
)


def test_canonicalize_relative_and_dot_segments():
    base = "https://Docs.Python.org:443/3/lib/a.html"
    assert canonicalize("../x/./y.html#frag", base) == "https://docs.python.org/3/x/y.html"
    assert canonicalize("?page=2", "http://a.com/dir/") == "http://a.com/dir/?page=2"
    assert canonicalize("HTTP://A.com") == "http://a.com/"
    assert canonicalize("http://a.com:8080/b") == "http://a.com:8080/b"


def test_canonicalize_rejects_other_schemes_and_bad_urls():
    for url in ("mailto:a@b.org", "javascript:void(0)", "ftp://x.org/", "",
                "http://exa mple.com/", "http://[::1/"):
        assert canonicalize(url, "http://a.com/") is None
    assert canonicalize("http://a.com/" + "x" * 3000) is None


def test_canonicalize_encodes_unsafe_characters_and_idna():
    assert canonicalize("//cdn.x.org/a b", "https://h.org/") == "https://cdn.x.org/a%20b"
    assert canonicalize("/a b", "https://x.org/") == "https://x.org/a%20b"
    assert canonicalize("https://münchen.de/") == "https://xn--mnchen-3ya.de/"


def test_url_facts():
    assert domain_suffixes("docs.python.org") == ["docs.python.org", "python.org", "org"]
    assert path_prefixes("https://a.org/3/lib/os.html") == ["/", "/3", "/3/lib", "/3/lib/os.html"]
    assert file_extension("http://a/b/c.PDF") == "pdf"
    assert file_extension("http://a/b/") == ""
    assert is_recursive("http://a.com/x/y/x/y/x/y/")
    assert not is_recursive("http://a.com/x/y/z/")
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("a" * 50, "b" * 50, limit=3) == 4
