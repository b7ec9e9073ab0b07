import pytest

from crawler.core.definition.seeds import SeedUrlError, canonical_seed_url, parse_seed_lines


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.COM", "http://example.com/"),
        ("https://example.com:443/a/b?x=1#frag", "https://example.com/a/b?x=1"),
        ("http://example.com:8080", "http://example.com:8080/"),
        ("  https://bücher.de/  ", "https://xn--bcher-kva.de/"),
        ("http://127.0.0.1:9000/x", "http://127.0.0.1:9000/x"),
        ("http://[::1]:8000/", "http://[::1]:8000/"),
    ],
)
def test_canonical_form(raw, expected):
    assert canonical_seed_url(raw) == expected


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("example.com", "needs a scheme"),
        ("ftp://example.com/", "not crawlable"),
        ("http://", "no host"),
        ("http://exa mple.com/", "white space"),
        ("http://user:pw@example.com/", "user name"),
        ("http://example.com:99999/", "malformed"),
        ("http://" + "a" * 2100 + ".com/", "longer than"),
        ("", "empty"),
    ],
)
def test_bad_urls(raw, fragment):
    with pytest.raises(SeedUrlError, match=fragment):
        canonical_seed_url(raw)


def test_bulk_lines_dedupe_and_name_bad_line():
    result = parse_seed_lines("https://a.com\n\n# note\nhttps://A.com/\nhttps://b.com/x\n")
    assert result.urls == ("https://a.com/", "https://b.com/x")
    assert result.duplicates == ("https://a.com/",)
    with pytest.raises(SeedUrlError) as info:
        parse_seed_lines("https://a.com\nnot a url\n")
    assert info.value.line == 2
    assert "line 2" in str(info.value) and "not a url" in str(info.value)
