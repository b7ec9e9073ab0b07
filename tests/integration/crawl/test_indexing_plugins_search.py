"""Indexing plugins end to end: `manage.py crawl` of a loopback fixture site with the
INDEXING_PLUGINS setting, then the search page finds pages by what the plugins added (a
region's word, a meta word, a sub-document) and by the built-in scrapers' meta words."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from ranking.search_service import search_service
from tests.fixtures import cms_pages
from tests.fixtures.plugins import REGION_WORD, SUBDOCUMENT_WORD
from tests.fixtures.sites import FixtureServer, Response
from tests.search_client import results

pytestmark = pytest.mark.django_db

API_PAGE = """<!DOCTYPE html><html lang="en"><head><title>gardenlib.trowel</title></head><body>
<div class="body" role="main"><section id="module-gardenlib.trowel"><h1>gardenlib.trowel</h1>
<p>Tools for digging.</p>
<dl class="py function"><dt class="sig sig-object py" id="gardenlib.trowel.dig_depth">
<span class="sig-prename descclassname"><span class="pre">gardenlib.trowel.</span></span>
<span class="sig-name descname"><span class="pre">dig_depth</span></span>(<em>soil</em>)</dt>
<dd><p>How far down to go in this soil.</p></dd></dl></section></div></body></html>"""
RECIPE_PAGE = """<!DOCTYPE html><html lang="en"><head><title>Leek soup recipe</title></head>
<body><h1>Leek soup recipe</h1><p>Boil the leeks with potatoes for twenty minutes.</p>
</body></html>"""


def garden_site(request):
    pages = {
        "/": '<html><head><title>Garden home</title></head><body><h1>Garden</h1><ul>'
             '<li><a href="/api.html">trowel reference</a></li>'
             '<li><a href="/recipe.html">leek soup</a></li>'
             '<li><a href="/blog/basil.html">basil blog post</a></li></ul></body></html>',
        "/api.html": API_PAGE,
        "/recipe.html": RECIPE_PAGE,
        "/blog/basil.html": cms_pages.wordpress_page().html,
    }
    if request.path == "/robots.txt":
        return Response(200, b"User-agent: *\nDisallow:\n", {"Content-Type": "text/plain"})
    if request.path not in pages:
        return Response(404, b"not found", {"Content-Type": "text/plain"})
    return Response(200, pages[request.path].encode(),
                    {"Content-Type": "text/html; charset=utf-8"})


@pytest.fixture
def crawled(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path / "work"
    settings.INDEX_REFRESH_SECONDS = 0.0
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    settings.INDEXING_PLUGINS = ("tests.fixtures.plugins.MarkerPlugin",
                                 "crawler.core.processing.plugins.api_names.ApiNamesPlugin")
    search_service().lexicons.clear()
    with FixtureServer(garden_site) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "60", "--fetchers", "2",
                     "--no-link-analysis")
        assert server.requests_for("/recipe.html") and server.requests_for("/api.html")
    yield server
    search_service().pool.close()
    search_service().lexicons.clear()


def test_search_finds_what_the_plugins_added(client, crawled):
    recipe = crawled.url("/recipe.html")
    # a word only the plugin's region holds
    assert f'href="{recipe}"' in results(client, REGION_WORD)
    # the plugin's meta word
    assert f'href="{recipe}"' in results(client, "class:marked")
    # the plugin's sub-document, at the page's url with its key
    page = results(client, SUBDOCUMENT_WORD)
    assert f'href="{recipe}#card"' in page and "Card of Leek soup recipe" in page
    # the shipped plugin: the API name the page defines, as a meta word and as words
    api = crawled.url("/api.html")
    assert f'href="{api}"' in results(client, "api:gardenlib.trowel.dig_depth")
    assert f'href="{recipe}"' not in results(client, "api:gardenlib.trowel.dig_depth")


def test_search_finds_the_builtin_scrapers_meta_words(client, crawled):
    basil = crawled.url("/blog/basil.html")
    page = results(client, "scraper:wordpress")
    assert f'href="{basil}"' in page
    assert crawled.url("/recipe.html") not in page
    # the comment left out by the scraper is not searchable on that page
    assert f'href="{basil}"' not in results(client, "leggy south window")
