"""The results editor (issue 37, item 9): a result's title and snippet edited in curation and
shown instead of the computed ones, and the host filter that hides every page of a host. Over
the search page tests' fixture index, through the test client and the admin."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ranking.core.search.curation import edited_text
from ranking.models import EditedResult, HiddenHost, host_name
from tests.web.test_search_page import build_site_index

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(search_work):
    build_site_index(search_work)
    return search_work


def results(client, query: str) -> list[dict]:
    return client.get("/", {"q": query, "f": "json"}).json()["results"]


def test_edited_text_escapes_and_keeps_what_was_left_empty():
    assert edited_text(("A <b> title", ""), "<b>x</b>", "s") == ("A &lt;b&gt; title", "s",
                                                                 "A <b> title")
    assert edited_text(("", "new & snippet"), "t", "old") == ("t", "new &amp; snippet", "")


def test_host_name_takes_the_host_of_a_url():
    assert host_name(" HTTPS://Spam.Example.test:8080/a?b ") == "spam.example.test"
    assert host_name("docs.example.test.") == "docs.example.test"


def test_an_edited_title_and_snippet_replace_the_computed_ones(admin_client, site):
    first = results(admin_client, "threading")[0]
    response = admin_client.post(reverse("admin:ranking_editedresult_add"), {
        "url": first["url"], "title": "  Our <own>   title ",
        "snippet": "Written by the editor & nobody else."})
    assert response.status_code == 302
    edited = results(admin_client, "threading")
    same = next(r for r in edited if r["url"] == first["url"])
    assert same["title"] == "Our <own> title"
    assert same["title_html"] == "Our &lt;own&gt; title"
    assert same["snippet"] == "Written by the editor &amp; nobody else."
    html = admin_client.get("/", {"q": "threading"}).content.decode()
    assert "Our &lt;own&gt; title" in html and "Written by the editor &amp; nobody" in html
    # another query finding the page shows the same edit; the others keep theirs
    other = [r for r in edited if r["url"] != first["url"]]
    assert all(r["title"] != "Our <own> title" for r in other)


def test_an_edit_with_only_a_snippet_keeps_the_title(admin_client, site):
    first = results(admin_client, "threading")[0]
    EditedResult.objects.create(url=first["url"], snippet="Only this.")
    now = results(admin_client, "threading")[0]
    assert now["title"] == first["title"] and now["snippet"] == "Only this."


def test_invalid_editor_input_is_a_form_error_not_a_5xx(admin_client, site):
    add = reverse("admin:ranking_editedresult_add")
    for data in ({"url": "javascript:alert(1)", "title": "x", "snippet": ""},
                 {"url": "http://docs.example.test/threads/1.html", "title": " ", "snippet": ""},
                 {"url": "", "title": "x" * 500, "snippet": "y"}):
        response = admin_client.post(add, data)
        assert response.status_code == 200 and b"errornote" in response.content
    assert not EditedResult.objects.exists()
    hosts = reverse("admin:ranking_hiddenhost_add")
    for host in ("", "not a host!", "a" * 300, "http://"):
        response = admin_client.post(hosts, {"host": host, "reason": ""})
        assert response.status_code == 200 and b"errornote" in response.content
    assert not HiddenHost.objects.exists()


def test_a_hidden_host_hides_all_its_pages_and_pages_stay_full(admin_client, site):
    before = results(admin_client, "threading")
    hosts = {r["url"].split("/")[2] for r in before}
    assert "docs.example.test" in hosts
    response = admin_client.post(reverse("admin:ranking_hiddenhost_add"),
                                 {"host": "HTTP://Docs.Example.test/threads/", "reason": "x"})
    assert response.status_code == 302
    assert HiddenHost.objects.get().host == "docs.example.test"
    after = results(admin_client, "threading")
    assert all(r["url"].split("/")[2] != "docs.example.test" for r in after)
    # the other hosts' pages that match are all there
    assert {r["url"].split("/")[2] for r in after} == {"private.example.test",
                                                        "evil.example.test"}
    assert not results(admin_client, "site:docs.example.test")
    HiddenHost.objects.all().delete()
    assert results(admin_client, "threading") == before
