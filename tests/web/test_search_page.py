"""The search page, the cached page view, RSS, OpenSearch and suggestions, through the test
client, over a small index built from fixture HTML with the crawler's own page processor."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from crawler.core.processing.indexing import batch_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.writer import IndexBundleWriter
from ranking import page as glue
from ranking.core.errors import ShardError
from ranking.core.search.messages import SearchMessage
from ranking.core.search.pipeline import Searcher, SearchResult
from ranking.search_service import search_service
from ranking.suggest import Lexicon, damerau, lexicon_path, read_lexicon

OS = "{http://a9.com/-/spec/opensearch/1.1/}"
ITS = 1_700_000_000
FETCHED_AT = 1_700_000_000.0


def _html(title: str, body: str, lang: str = "en", head: str = "") -> str:
    return (f'<!doctype html><html lang="{lang}"><head><title>{title}</title>{head}</head>'
            f"<body><h1>{title}</h1>{body}</body></html>")


def site_pages() -> dict[str, str]:
    """url -> HTML of the fixture site: 24 pages about threads (so results paginate), a
    NOARCHIVE page, a hostile page (script in its title, text and handlers), a French page."""
    pages = {}
    for i in range(24):
        pages[f"http://docs.example.test/threads/{i}.html"] = _html(
            f"Python threading guide part {i}",
            f"<p>Threading lets a program run concurrent threads. Part {i} explains locks, "
            f"queues and the global interpreter lock in python programming.</p>"
            f'<p>See <a href="/threads/{(i + 1) % 24}.html">the next part about threading</a>.'
            "</p>")
    pages["http://private.example.test/secret.html"] = _html(
        "Threading secrets archive", "<p>Private threading notes that must not be archived.</p>",
        head='<meta name="robots" content="noarchive">')
    pages["http://evil.example.test/hostile.html"] = (
        '<!doctype html><html lang="en"><head><title>Hostile threading page '
        '&lt;script&gt;alert(1)&lt;/script&gt;</title>'
        "<script>window.parent.__pwned = 1; document.title = 'pwned';</script></head><body>"
        '<h1 onclick="window.__pwned=2">Hostile threading page</h1>'
        '<p>Threading text <img src="x" onerror="window.__pwned=3; '
        "document.body.setAttribute('data-pwned','1')\">"
        "&lt;script&gt;alert('x')&lt;/script&gt; with scripts.</p>"
        "<script>document.body.setAttribute('data-pwned', '1');</script>"
        "</body></html>")
    pages["http://fr.example.test/fils.html"] = _html(
        "Programmation des fils en python",
        "<p>Les fils d'exécution permettent la programmation concurrente en python. Le verrou "
        "global de l'interpréteur limite le parallélisme des fils.</p>", lang="fr")
    return pages


def build_site_index(work: Path, its: int = ITS, server: int = 0) -> Path:
    processor = PageProcessor()
    processed = [processor.process(FetchedPage(url, body.encode(), 200,
                                               {"Content-Type": "text/html; charset=utf-8"},
                                               fetched_at=FETCHED_AT))
                 for url, body in site_pages().items()]
    path = work / f"qs{server}" / f"IndexData{its}"
    with IndexBundleWriter(path) as writer:
        writer.append(batch_documents(processed))
    return path


@pytest.fixture
def work(tmp_path, settings, db):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    yield tmp_path
    search_service().pool.close()
    search_service().lexicons.clear()


@pytest.fixture
def site(work):
    build_site_index(work)
    return work


def html_of(response) -> str:
    return response.content.decode()


# -- the page ------------------------------------------------------------------------------


def test_empty_page_has_form_landmarks_and_opensearch_link(client, work):
    response = client.get("/")
    page = html_of(response)
    assert response.status_code == 200
    assert '<html lang="en">' in page and 'role="search"' in page and "<main" in page
    assert '<label for="q"' in page and '<label for="safe"' in page and '<label for="lang"' in page
    assert 'rel="search" type="application/opensearchdescription+xml"' in page
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert response["X-Content-Type-Options"] == "nosniff"


def test_results_keep_query_and_show_links(client, site):
    response = client.get("/", {"q": "threading locks"})
    page = html_of(response)
    assert response.status_code == 200
    assert 'value="threading locks"' in page
    assert 'href="http://docs.example.test/threads/' in page
    assert "docs.example.test/threads/" in page  # the display url
    assert "<b>" in page  # highlighted snippet or title
    # the 24 thread pages match: the total is exact (ranking.totals), no "about"
    assert re.search(r"Results 1–10 of (\d+) \(", page).group(1) == "24"
    assert 'class="cache-link"' in page and "/cache?url=http%3A%2F%2Fdocs.example.test" in page
    assert "site%3Adocs.example.test" in page  # more from this site
    assert "q=link%3Ahttp%3A%2F%2Fdocs.example.test" in page  # inlinks
    assert 'class="similar-link"' in page
    assert "<details class=\"why\">" in page and "Doc Rank" in page and "Relevance" in page


def test_hostile_page_is_escaped_in_results(client, site):
    page = html_of(client.get("/", {"q": "hostile threading"}))
    assert "evil.example.test" in page
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "onerror" not in page


def test_noarchive_page_has_no_cache_link(client, site):
    page = html_of(client.get("/", {"q": "secrets archive"}))
    assert "private.example.test/secret.html" in page
    assert "/cache?url=http%3A%2F%2Fprivate" not in page


def test_result_links_use_what_the_pipeline_read(client, site, monkeypatch):
    """The pipeline's results carry the robot metas, keywords and cached-copy flag of the
    summaries it read; the page does not read the stored pages again."""
    def read_again(*args, **kwargs):
        raise AssertionError("a result's stored page was read again")

    monkeypatch.setattr(glue, "find_stored_page", read_again)
    shown = html_of(client.get("/", {"q": "threading locks"}))
    assert 'class="cache-link"' in shown and 'class="similar-link"' in shown
    private = html_of(client.get("/", {"q": "secrets archive"}))
    assert "private.example.test/secret.html" in private
    assert "/cache?url=http%3A%2F%2Fprivate" not in private


def test_carried_links_are_those_of_the_stored_pages(site):
    """Links made from the carried fields equal those made by reading each stored page."""
    its, shards = search_service().shards(None)
    options = search_service().options()
    for query in ("threading", "secrets archive", "hostile threading"):
        result = Searcher(shards, options).search(query, num=30)
        assert result.results and all(glue.carried(r) for r in result.results)
        looked_up = replace(result, results=tuple(replace(r, has_cache=None)
                                                  for r in result.results))
        assert not any(glue.carried(r) for r in looked_up.results)
        got = glue.result_views(result, shards, its, options, {})
        want = glue.result_views(looked_up, shards, its, options, {})
        assert [(v.cache_href, v.similar_href, v.inlinks_href, v.site_href) for v in got] == \
            [(v.cache_href, v.similar_href, v.inlinks_href, v.site_href) for v in want]
        assert any(v.cache_href for v in got) == (query != "secrets archive")


def test_pagination_with_num_and_limit(client, site):
    first = html_of(client.get("/", {"q": "threading", "num": "5"}))
    assert first.count('class="result"') == 5
    assert 'rel="next"' in first and 'rel="prev"' not in first
    assert "limit=5" in first and "num=5" in first
    second = html_of(client.get("/", {"q": "threading", "num": "5", "limit": "5"}))
    assert second.count('class="result"') == 5 and "Results 6–10" in second
    assert 'rel="prev"' in second and 'aria-current="page"' in second
    ranks = [r["url"] for r in client.get("/", {"q": "threading", "num": "5", "limit": "5",
                                                "f": "json"}).json()["results"]]
    firsts = [r["url"] for r in client.get("/", {"q": "threading", "num": "5",
                                                 "f": "json"}).json()["results"]]
    assert not set(ranks) & set(firsts)


def test_results_per_page_from_page_options(client, site):
    from crawler import services

    options = services.page_options_default_get()
    options.results_per_page = 3
    options.save()
    page = html_of(client.get("/", {"q": "threading"}))
    assert page.count('class="result"') == 3


def test_language_filter_and_safe_toggle(client, site):
    english = html_of(client.get("/", {"q": "python"}))
    assert "fr.example.test" not in english
    french = html_of(client.get("/", {"q": "python", "lang": "fr"}))
    assert "fr.example.test" in french and "docs.example.test" not in french
    assert '<option value="fr" lang="fr" selected>' in french
    anything = html_of(client.get("/", {"q": "python", "lang": "all", "num": "30"}))
    assert "fr.example.test" in anything and "docs.example.test" in anything
    off = html_of(client.get("/", {"q": "python", "safe": "off"}))
    assert '<option value="off" selected>' in off and "safe=on" in off
    on = html_of(client.get("/", {"q": "python"}))
    assert "Safe search: on" in on and "safe=off" in on


def test_misspelt_query_shows_the_correction_results(client, site):
    page = html_of(client.get("/", {"q": "threadinng"}))
    assert "No results" not in page
    assert 'id="corrected"' in page and "Showing results for" in page
    assert "<strong>threading</strong>" in page
    assert 'href="http://docs.example.test/threads/' in page
    # the original query is offered, forced with nfpr=1
    assert 'id="search-instead"' in page and "q=threadinng&amp;nfpr=1" in page


def test_forced_original_query_has_no_results_and_offers_the_correction(client, site):
    page = html_of(client.get("/", {"q": "threadinng", "nfpr": "1"}))
    assert "No results" in page and 'id="corrected"' not in page
    assert 'id="did-you-mean"' in page and ">threading</a>" in page
    # said once (issue 39: "Did you mean ...?" above, "Try ..." again in the no-results box)
    assert page.count(">threading</a>") == 1 and "Try <a" not in page


def test_did_you_mean_not_shown_for_known_words(client, site):
    page = html_of(client.get("/", {"q": "threading"}))
    assert "did-you-mean" not in page


def test_rewritten_query_is_shown(client, site):
    page = html_of(client.get("/", {"q": "threading docs.example.com"}))
    assert "Searched for" in page and "threading site:docs.example.com" in page
    assert "No results" in page


def test_messages_for_bad_input_missing_index_and_partial(client, work, monkeypatch):
    page = html_of(client.get("/", {"q": "anything"}))
    assert 'class="msg error"' in page and "no index" in page
    build_site_index(work)
    page = html_of(client.get("/", {"q": "threading", "num": "many"}))
    assert "num=many is not a valid number" in page

    real = Searcher.search

    def partial(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        return SearchResult(result.query, result.rewritten, result.results, result.total,
                                  result.elapsed, True,
                                  (SearchMessage.warning(
                                      "search stopped at the time budget; results are partial"),
                                   SearchMessage.warning("qs1: connection refused")),
                                  result.offset, result.num)

    monkeypatch.setattr(Searcher, "search", partial)
    page = html_of(client.get("/", {"q": "threading"}))
    assert page.count('class="msg warning"') == 2 and "Partial results" in page


def test_search_failure_is_an_error_message(client, site, monkeypatch):
    def broken(self, *args, **kwargs):
        raise ShardError("qs0", "the index is being replaced")

    monkeypatch.setattr(Searcher, "search", broken)
    response = client.get("/", {"q": "threading"})
    assert response.status_code == 200  # a page that says what failed, never a 5xx
    page = html_of(response)
    assert "the search failed" in page and "qs0: the index is being replaced" in page
    answer = client.get("/", {"q": "threading", "f": "json"})
    assert answer.status_code == 200
    data = answer.json()
    assert data["results"] == [] and data["partial"] is True and data["total"] == 0
    assert any("qs0: the index is being replaced" in m for m in data["messages"])
    feed = client.get("/", {"q": "threading", "f": "rss"})
    assert feed.status_code == 200
    assert ET.fromstring(feed.content).find(f"channel/{OS}totalResults").text == "0"


def test_no_shard_answering_is_not_called_partial(client, work, settings):
    import socket

    def closed_port() -> int:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]

    settings.SEARCH_REMOTE_QUEUE_SERVERS = (f"http://127.0.0.1:{closed_port()}/",)
    response = client.get("/", {"q": "threading"})
    page = html_of(response)
    assert response.status_code == 200
    assert "no part of the index answered" in page.lower()
    assert "unreachable" in page and "Partial results" not in page


def test_long_query_is_shortened(client, site):
    data = client.get("/", {"q": "threading " * 200, "f": "json"}).json()
    assert any("shortened" in m for m in data["messages"])


def test_json_keeps_its_contract(client, site):
    data = client.get("/", {"q": "threading", "f": "json", "num": "2"}).json()
    assert set(data) >= {"results", "total", "time", "partial", "messages", "query"}
    assert len(data["results"]) == 2
    assert set(data["results"][0]) == {"url", "title", "title_html", "snippet", "score"}
    explained = client.get("/", {"q": "threading", "f": "json", "num": "2", "explain": "1"})
    assert set(explained.json()["results"][0]) == {"url", "title", "title_html", "snippet",
                                                   "score", "explanation"}


# -- cached pages --------------------------------------------------------------------------


def test_cache_page_banner_and_frame(client, site):
    url = "http://docs.example.test/threads/3.html"
    response = client.get("/cache", {"url": url, "its": str(ITS), "q": "locks"})
    page = html_of(response)
    assert response.status_code == 200
    assert f'href="{url}"' in page and "2023" in page and f"crawl {ITS}" in page
    assert "<iframe" in page and 'sandbox="allow-popups allow-popups-to-escape-sandbox"' in page
    assert "allow-scripts" not in page and "allow-same-origin" not in page
    assert "<mark>locks</mark>" in page
    frame = client.get("/cache/frame", {"url": url, "its": str(ITS), "q": "locks"})
    assert frame.status_code == 200
    csp = frame["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "sandbox" in csp and "allow-scripts" not in csp
    assert frame["X-Content-Type-Options"] == "nosniff"
    assert frame["X-Frame-Options"] == "SAMEORIGIN"
    body = html_of(frame)
    assert '<mark style="background-color:#ffeb3b;color:#000">locks</mark>' in body
    assert '<base href="http://docs.example.test/threads/3.html" target="_blank">' in body
    assert "noindex,nofollow" in body


def test_cached_script_is_served_only_into_the_sandbox(client, site):
    url = "http://evil.example.test/hostile.html"
    frame = client.get("/cache/frame", {"url": url, "q": "threading"})
    assert frame.status_code == 200
    assert "sandbox" in frame["Content-Security-Policy"]
    assert "script-src" not in frame["Content-Security-Policy"]  # default-src 'none' rules
    # and the page itself carries no script any more: the sandbox is the second line
    body = html_of(frame)
    assert "<script" not in body and "__pwned" not in body and "onerror" not in body


def test_noarchive_page_has_no_cache(client, site):
    url = "http://private.example.test/secret.html"
    response = client.get("/cache", {"url": url})
    assert response.status_code == 404 and "NOARCHIVE" in html_of(response)
    assert client.get("/cache/frame", {"url": url}).status_code == 404


def test_cache_of_unknown_page(client, site):
    assert client.get("/cache", {"url": "http://nowhere.test/"}).status_code == 404
    assert client.get("/cache").status_code == 404
    assert client.get("/cache/frame", {"url": "http://nowhere.test/"}).status_code == 404


# -- feeds ---------------------------------------------------------------------------------


def test_rss_is_valid_rss_2_with_opensearch_elements(client, site):
    response = client.get("/", {"q": "threading", "f": "rss", "num": "4", "limit": "4"})
    assert response["Content-Type"].startswith("application/rss+xml")
    root = ET.fromstring(response.content)
    assert root.tag == "rss" and root.get("version") == "2.0"
    channel = root.find("channel")
    assert channel is not None
    for tag in ("title", "link", "description"):
        assert channel.findtext(tag)
    assert int(channel.findtext(f"{OS}totalResults")) >= 24
    assert channel.findtext(f"{OS}startIndex") == "5"
    assert channel.findtext(f"{OS}itemsPerPage") == "4"
    items = channel.findall("item")
    assert len(items) == 4
    for item in items:
        assert item.findtext("link").startswith("http://")
        assert item.findtext("title") and item.findtext("guid") == item.findtext("link")


def test_rss_escapes_hostile_text(client, site):
    response = client.get("/", {"q": "hostile", "f": "rss"})
    root = ET.fromstring(response.content)
    titles = [i.findtext("title") for i in root.iter("item")]
    assert any("<script>" in t for t in titles)  # text, escaped in the XML
    assert b"<script>" not in response.content


def test_opensearch_description(client, work):
    response = client.get("/opensearch.xml")
    assert response["Content-Type"].startswith("application/opensearchdescription+xml")
    root = ET.fromstring(response.content)
    assert root.tag == f"{OS}OpenSearchDescription"
    assert root.findtext(f"{OS}ShortName")
    templates = {u.get("type"): u.get("template") for u in root.findall(f"{OS}Url")}
    assert templates["text/html"] == "http://testserver/?q={searchTerms}"
    assert "f=rss" in templates["application/rss+xml"]
    assert "/suggest?q={searchTerms}" in templates["application/x-suggestions+json"]


# -- suggestions ---------------------------------------------------------------------------


def test_suggest_endpoint_completes_from_the_index(client, site):
    data = client.get("/suggest", {"q": "thre"}).json()
    assert data["query"] == "thre"
    assert "threading" in data["suggestions"] and "threads" in data["suggestions"]
    assert client.get("/suggest", {"q": "python glo"}).json()["suggestions"][0] == \
        "python global"
    assert client.get("/suggest", {"q": "zzzq"}).json()["suggestions"] == []
    assert client.get("/suggest", {"q": ""}).json()["suggestions"] == []
    form = client.get("/suggest", {"q": "thre", "f": "opensearch"})
    assert form["Content-Type"] == "application/x-suggestions+json"
    assert json.loads(form.content)[0] == "thre"


def test_suggest_without_index(client, work):
    assert client.get("/suggest", {"q": "thre"}).json()["suggestions"] == []


def test_lexicon_file_is_written_and_holds_index_words(client, site):
    client.get("/suggest", {"q": "py"})
    sig, counts = read_lexicon(lexicon_path(site, ITS))
    assert sig and counts["threading"] >= 24 and counts["python"] >= 25
    assert "script" in counts or "scripts" in counts
    assert all(w.isalpha() and w == w.lower() for w in counts)


def test_management_command_builds_the_lexicon(site, settings):
    from django.core.management import call_command

    call_command("build_suggest_lexicon")
    _, counts = read_lexicon(lexicon_path(site, ITS))
    assert "threading" in counts


def test_lexicon_completion_and_correction():
    lexicon = Lexicon({"threading": 30, "threads": 10, "thread": 5, "python": 40, "queue": 3})
    assert lexicon.complete("thr") == ["threading", "threads", "thread"]
    assert lexicon.correct("pyhton") == "python"  # a transposition
    assert lexicon.correct("threadng") == "threading"
    assert lexicon.correct("qeue") == "queue"
    assert lexicon.correct("xylophone") is None and lexicon.correct("python") is None
    assert lexicon.did_you_mean('pyhton "exact phrase" site:x.test -qeue') == \
        'python "exact phrase" site:x.test -qeue'
    assert lexicon.suggest_queries("learn pyt") == ["learn python"]
    assert damerau("abcd", "acbd", 2) == 1 and damerau("kitten", "sitting", 5) == 3


def test_explanation_tables_escape_every_value():
    rows = [("Score", "1.5"), ("Index", "<script>alert(1)</script>")]
    terms = [{"term": 'a"b', "f": "2", "l_t": None, "value": "x&y"}]
    made = glue.explain_html(rows, terms)
    assert "<script>" not in made and "&lt;script&gt;alert(1)&lt;/script&gt;" in made
    assert "a&quot;b" in made and "x&amp;y" in made and "<td>None</td>" in made
    assert made.count('<th scope="row">') == 2 and made.count("<caption>Query terms") == 1
    assert 'class="explain terms"' not in glue.explain_html(rows, [])


def test_search_page_reuses_its_searcher(client, site):
    client.get("/", {"q": "threading"})
    options = search_service().options()
    first = search_service().searcher(search_service().shards(None)[1], options)
    client.get("/", {"q": "python locks"})
    assert search_service().searcher(search_service().shards(None)[1], options) is first
    search_service().pool.close()  # the bundle reopened: new shards, a new searcher
    assert search_service().searcher(search_service().shards(None)[1], options) is not first
