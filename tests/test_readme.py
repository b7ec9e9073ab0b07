"""The README's first steps (issue 39, item 1): the quick start keeps its two commands (CI
runs the second, .ci/run) and says what each is for; "Your first crawl" follows it and names
the admin's controls as they are (tests/browser/test_first_crawl_readme.py walks it in
Chromium); "Crawling an intranet or a local site" gives both settings, their formats and an
example; the test run's time is given one way."""

from __future__ import annotations

import re

from ranking.core.search.pipeline import Result, SearchResult
from ranking.views import result_json
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.S | re.M)
    assert found, f"no section {title!r}"
    return found.group(1)


def test_quick_start_says_what_each_command_is_for():
    quick = section("Quick start")
    assert quick.lstrip().startswith("```sh\nmake run\nmake test\n```")
    assert "`make run` starts the engine, to use it" in quick
    assert "never returns" in quick and "`make test` checks the code" in quick


def test_first_crawl_follows_the_quick_start_and_names_the_admin_controls():
    titles = re.findall(r"^## (.+)$", README, re.M)
    assert titles[:3] == ["Quick start", "Your first crawl", "Crawling an intranet or a local site"]
    first = section("Your first crawl")
    for control in ("http://127.0.0.1:8000/admin/", "**Crawls** → **Add crawl**",
                    "**Add seed sites**", "**Restrict to seed and allowed sites**",
                    "**Max pages**", "**Save**", "**status**", "**Start**",
                    "http://127.0.0.1:8000/"):
        assert control in first, control


def test_intranet_section_gives_both_settings_their_format_and_an_example():
    text = section("Crawling an intranet or a local site")
    assert "`CRAWLER_ALLOWED_NETWORKS`" in text and "comma-separated" in text
    assert "public,10.0.0.0/8,192.168.0.0/16" in text
    assert "`CRAWLER_CA_BUNDLE`" in text and "-----BEGIN CERTIFICATE-----" in text
    assert "CRAWLER_ALLOWED_NETWORKS=10.0.0.0/8\nCRAWLER_CA_BUNDLE=" in text


def test_the_test_run_time_is_given_one_way():
    assert not re.search(r"\b(8|eight) minutes", README)


def test_search_api_section_names_every_parameter_and_json_field():
    """Issue 39, item 10: the API's parameters were documented nowhere in one place. Every
    parameter the search view reads and every field of its JSON answer is named there."""
    api = section("Search API")
    for parameter in ("`q`", "`num`", "`limit`", "`its`", "`mix`", "`safe=off`", "`lang=xx`",
                      "`nfpr=1`", "`f=json`", "`f=rss`", "`explain=1`"):
        assert parameter in api, parameter
    fields = [*SearchResult("q", "q", (), 0, 0.0, False).as_dict(), "index", "elsewhere"]
    for name in fields:
        assert f"`{name}`" in api, name
    one = result_json(Result("u", "t", "s", 1.0, {}, "0", "0"), explain=True)
    for name in one:  # each result's fields
        assert f"`{name}`" in api, name
