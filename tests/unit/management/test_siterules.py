import pytest

from crawler.core.definition.siterules import (
    SiteRuleError,
    SiteRules,
    normalize_host,
    parse_site_rules,
)


def test_each_rule_kind_parses():
    rules = parse_site_rules(
        "# comment\n\nwww.Example.com\ndomain:example.org\nregex:^https?://a\\.net/docs/\n"
        "https://b.net/path/\n"
    )
    assert [(r.kind, r.value) for r in rules] == [
        ("host", "www.example.com"),
        ("domain", "example.org"),
        ("regex", "^https?://a\\.net/docs/"),
        ("prefix", "https://b.net/path/"),
    ]


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("ok.com\nregex:([unclosed", 2, "bad regular expression"),
        ("domain:", 1, "empty host"),
        ("domain:bad_host!.com", 1, "invalid host"),
        ("a.com\nb.com\nftp://c.com/", 3, "http:// or https://"),
        ("has space.com", 1, "not a host"),
        ("regex:", 1, "needs a pattern"),
        ("-leading.com", 1, "invalid host"),
        ("ok.com\nhttp://example.com:99999/", 2, "not a url"),  # port out of range
        ("https://[::1/", 1, "not a url"),  # an unclosed IPv6 host
    ],
)
def test_bad_rules_name_their_line(text, line, fragment):
    with pytest.raises(SiteRuleError) as info:
        parse_site_rules(text)
    assert info.value.line == line
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"line {line}:")


def test_matching():
    rules = SiteRules(
        allowed=parse_site_rules("domain:example.org\nregex:^https://x\\.net/ok/"),
        disallowed=parse_site_rules("private.example.org\nhttps://x.net/ok/secret"),
        restrict=True,
        seed_hosts=frozenset({"seed.com"}),
    )
    assert rules.permits("https://a.b.example.org/page")
    assert rules.permits("http://example.org/")
    assert rules.permits("https://seed.com/anything")
    assert rules.permits("https://x.net/ok/doc")
    assert not rules.permits("https://x.net/ok/secret/1")
    assert not rules.permits("https://private.example.org/")
    assert not rules.permits("https://notexample.org/")
    assert not rules.permits("https://other.com/")
    open_rules = SiteRules(disallowed=rules.disallowed)
    assert open_rules.permits("https://other.com/")
    assert not open_rules.permits("https://private.example.org/x")


def test_normalize_host_idna_and_case():
    assert normalize_host("Bücher.DE.") == "xn--bcher-kva.de"
    with pytest.raises(ValueError):
        normalize_host("")
