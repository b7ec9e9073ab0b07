"""Office and e-book documents end to end (issue 37, item 4): `manage.py crawl` of a loopback
fixture site linking docx, pptx, xlsx, odt and epub files made with their libraries, then the
search page finds each document by a word only its body holds. A zip bomb and a corrupt
document on the same site are fetched, refused with an error, and lose nothing else."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from crawler.core.processing import mime
from ranking.search_service import search_service
from tests.fixtures.office_documents import MAKERS, zip_bomb
from tests.fixtures.sites import FixtureServer, Response, unique_word
from tests.search_client import results

pytestmark = pytest.mark.django_db

KINDS = ("docx", "pptx", "xlsx", "odt", "epub")
TYPES = {"docx": mime.DOCX, "pptx": mime.PPTX, "xlsx": mime.XLSX, "odt": mime.ODT,
         "epub": mime.EPUB}
WORDS = {kind: unique_word("office body", kind) for kind in KINDS}
HOME_WORD = unique_word("office home")


def document_site():
    files = {f"/files/report.{kind}": (MAKERS[kind](f"Quarterly {kind} file", WORDS[kind]),
                                       TYPES[kind]) for kind in KINDS}
    # the epub under a generic type: the content tells what it is
    files["/files/report.epub"] = (files["/files/report.epub"][0], "application/octet-stream")
    files["/files/bomb.docx"] = (zip_bomb(megabytes=300), mime.DOCX)
    files["/files/corrupt.xlsx"] = (b"PK\x03\x04 not really a workbook" * 40, mime.XLSX)
    links = "".join(f'<li><a href="{path}">{path.rsplit("/", 1)[1]} download</a></li>'
                    for path in files)
    home = (f"<!DOCTYPE html><html lang=\"en\"><head><title>Documents</title></head><body>"
            f"<h1>Company documents</h1><p>The {HOME_WORD} archive of reports.</p>"
            f"<ul>{links}</ul></body></html>").encode()

    def route(request):
        if request.path == "/robots.txt":
            return Response(200, b"User-agent: *\nDisallow:\n", {"Content-Type": "text/plain"})
        if request.path == "/":
            return Response(200, home, {"Content-Type": "text/html; charset=utf-8"})
        if request.path in files:
            body, content_type = files[request.path]
            return Response(200, body, {"Content-Type": content_type})
        return Response(404, b"not found", {"Content-Type": "text/plain"})

    return route, files


@pytest.fixture
def crawled(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path / "work"
    settings.INDEX_REFRESH_SECONDS = 0.0
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    route, files = document_site()
    with FixtureServer(route) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "90", "--fetchers", "2",
                     "--no-link-analysis")
        for path in files:
            assert server.requests_for(path), f"{path} was never fetched"
        yield server
    search_service().pool.close()
    search_service().lexicons.clear()


def test_each_document_is_found_by_a_word_of_its_body(client, crawled):
    for kind in KINDS:
        page = results(client, WORDS[kind])
        url = crawled.url(f"/files/report.{kind}")
        assert f'href="{url}"' in page, f"{kind} not found by its body word"
        assert f"Quarterly {kind} file" in page  # the document's own title
        others = [other for other in KINDS if other != kind]
        assert not any(crawled.url(f"/files/report.{o}") in page for o in others)
    # the hostile files cost nothing else: the home page is searchable too
    assert f'href="{crawled.url("/")}"' in results(client, HOME_WORD)
