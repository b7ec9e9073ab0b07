"""Issue 18: manager-typed regular expressions (scraper signatures, page rules, site rules) run
in linear time, and the validators refuse what RE2 cannot run (backreferences, lookarounds)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from django.core.exceptions import ValidationError

from crawler import validators
from crawler.core.definition.siterules import SiteRuleError, parse_site_rules
from crawler.core.processing.errors import PageRuleSyntaxError, ScraperConfigError
from crawler.core.processing.linear_regex import LinearRegexError, compile_linear
from crawler.core.processing.page_rules import parse_rules
from crawler.core.processing.scrapers import validate_signature

HOSTILE = r"(\w+\s?)+$"

# Run in a child so that the code before the fix (Python's backtracking re, exponential on this
# pattern) fails by the timeout instead of hanging the suite.
_CHILD = textwrap.dedent(r'''
    import time
    from crawler.core.processing.page_rules import parse_rules
    from crawler.core.processing.scrapers import ScraperConfig, ScraperSet
    from crawler.core.definition.siterules import parse_site_rules
    hostile = r"(\w+\s?)+$"
    text = "word " * 20_000 + "!"          # 100 KB that almost matches
    started = time.perf_counter()
    scrapers = ScraperSet([ScraperConfig(name="h", signature=hostile, priority=1)])
    assert scrapers.choose(None, text) is None
    rules = parse_rules("TITLE = /" + hostile + "/x/\nTITLE = /" + hostile + "/g")
    rules.apply({"TITLE": text})
    (rule,) = parse_site_rules("regex:" + hostile)
    assert not rule.matches("https://example.com/" + text, "example.com")
    print(time.perf_counter() - started)
''')


def test_hostile_patterns_on_100kb_finish_well_under_a_second():
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                              timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("a backtracking pattern ran for over 20 s on a 100 KB page")
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.split()[-1]) < 0.5


@pytest.mark.parametrize(("pattern", "words"), [
    (r"(a)\1", "backreference"),
    (r"(?P<x>a)(?P=x)", "backreference"),
    (r"foo(?=bar)", "lookahead"),
    (r"foo(?!bar)", "negative lookahead"),
    (r"(?<=a)b", "lookbehind"),
    (r"(?<!a)b", "negative lookbehind"),
])
def test_parsers_refuse_what_re2_cannot_run(pattern, words):
    with pytest.raises(ScraperConfigError) as scraper:
        validate_signature(pattern)
    assert words in scraper.value.message and scraper.value.field == "signature"
    with pytest.raises(SiteRuleError, match=words):
        parse_site_rules("ok.com\nregex:" + pattern)
    with pytest.raises(PageRuleSyntaxError, match=words):
        parse_rules(f"TITLE = /{pattern}/x/")


def test_admin_validators_name_the_field_and_the_problem():
    with pytest.raises(ValidationError) as info:
        validators.validate_scraper_signature(r"(\w+)\s+\1")
    message = " ".join(info.value.messages)
    assert "signature" in message and "backreferences" in message and r"\1" in message
    with pytest.raises(ValidationError, match="line 2: .*lookahead"):
        validators.validate_site_rules("ok.com\nregex:^https://a(?=b)")
    with pytest.raises(ValidationError, match="lookbehind"):
        validators.validate_page_rules("TITLE = /(?<=x)y/z/")


def test_valid_patterns_and_flags_keep_working():
    assert compile_linear("wordpress", "i").search("Made with WordPress")
    assert compile_linear("^b", "m").search("a\nb")
    assert compile_linear("a.b", "s").search("a\nb")
    assert compile_linear(" a [ ]b  # comment\n c", "x").search("a bc")
    assert compile_linear(r"(?P<y>\d{4})-(\d\d)").sub(r"\g<2>/\g<y>", "2024-05") == "05/2024"
    (rule,) = parse_site_rules(r"regex:^https?://x\.net/ok/")
    assert rule.matches("https://x.net/ok/doc", "x.net")
    with pytest.raises(LinearRegexError, match="missing"):
        compile_linear("(unclosed")
