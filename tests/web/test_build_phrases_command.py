"""``manage.py build_phrases``: a crawl's common phrases from its bundles on disk, written
beside each bundle, through call_command."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from indexer.core.runtime.workdir import phrases_path
from indexer.core.signals.phrases import PhraseLexicon
from tests.unit.linkgraph.helpers import write_bundle

PAGES = [
    ("https://docs.test/ctx.html",
     "<title>The Request Context</title><p>How it works.</p>"
     '<a href="https://docs.test/app.html">Application context</a>'),
    ("https://docs.test/app.html",
     "<title>The Application Context</title><p>Where the app lives.</p>"
     '<a href="https://docs.test/ctx.html">Request context</a>'),
]


def _run(*args: str) -> str:
    out = StringIO()
    call_command("build_phrases", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_build_phrases_of_the_newest_crawl_and_of_a_named_one(settings, tmp_path):
    settings.WORK_DIRECTORY = tmp_path
    # crawl 20 has one bundle per queue server; crawl 10 is older
    write_bundle(tmp_path / "qs0" / "IndexData20", PAGES[:1])
    write_bundle(tmp_path / "qs1" / "IndexData20", PAGES[1:])
    write_bundle(tmp_path / "qs0" / "IndexData10", PAGES[:1])
    out = _run()
    assert "Common phrases of crawl 20: 2 (2 of 2 words" in out
    for qs in ("qs0", "qs1"):
        lexicon = PhraseLexicon.load(phrases_path(tmp_path / qs / "IndexData20"))
        # each phrase is a title on one server and an anchor text on the other
        assert lexicon.count_of(["request", "context"]) == 2
        assert lexicon.count_of(["applic", "context"]) == 2
    assert not phrases_path(tmp_path / "qs0" / "IndexData10").exists()
    out = _run("--crawl", "10", "--min-count", "1")  # one title and one anchor text
    assert "Common phrases of crawl 10: 2 " in out
    assert PhraseLexicon.load(phrases_path(tmp_path / "qs0" / "IndexData10")).count_of(
        ["request", "context"]) == 1


def test_errors_become_command_errors(settings, tmp_path):
    settings.WORK_DIRECTORY = tmp_path
    with pytest.raises(CommandError, match="no crawl bundles"):
        _run()
    with pytest.raises(CommandError, match="no bundles"):
        _run("--crawl", "42")
    with pytest.raises(CommandError, match="at least 1"):
        _run("--min-count", "0")
