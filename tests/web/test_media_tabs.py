"""The Images and Videos tabs (issue 37, item 2) over tests/web/media_site.py, through the test
client: each tab keeps its kind of result, with the size and duration filters, image results
show the crawler's stored copy (never a third-party image), video results their length."""

from __future__ import annotations

import re

import pytest

from tests.web.media_site import IMAGES, VIDEOS, media_pages

pytestmark = pytest.mark.django_db
ODD = ["\x00", "<script>", "images\x00", "IMAGES", "9" * 40, "é" * 200, ""]


def urls(client, **params) -> list[str]:
    answer = client.get("/", {"f": "json", "q": "lighthouse", **params}).json()
    return sorted(r["url"] for r in answer["results"])


def test_each_tab_keeps_its_kind_of_result(client, media):
    assert len(urls(client)) == 8
    assert urls(client, tab="images") == sorted(
        f"http://img.example.test/lighthouse-{size}.png" for size in IMAGES)
    assert urls(client, tab="videos") == sorted(
        f"http://video.example.test/{kind}.html" for kind in VIDEOS)
    for size in IMAGES:
        assert urls(client, tab="images", size=size) == [
            f"http://img.example.test/lighthouse-{size}.png"]
    for kind in VIDEOS:
        assert urls(client, tab="videos", duration=kind) == [
            f"http://video.example.test/{kind}.html"]
    # the tab's words combine with the time period: these pages were fetched in 2023
    assert urls(client, tab="images", t="week") == []


def test_image_results_show_the_stored_copy_only(client, media):
    response = client.get("/", {"q": "lighthouse", "tab": "images"})
    html = response.content.decode()
    assert "img-src 'self' data:" in response["Content-Security-Policy"]
    thumbs = re.findall(r'<img src="(/cache/image\?[^"]+)"', html)
    assert len(thumbs) == 3 and html.count('class="image-result"') == 3
    assert not re.search(r'<img[^>]+src="https?:', html)  # nothing hot-linked
    bodies = {url: body for url, body, _ in media_pages()}
    for thumb in thumbs:
        served = client.get(thumb.replace("&amp;", "&"))
        assert served.status_code == 200 and served["Content-Type"] == "image/png"
        assert served["X-Content-Type-Options"] == "nosniff"
        assert served.content in bodies.values()
    assert '<span aria-current="true" class="current" id="tab-images">Images</span>' in html
    assert '<select id="size" name="size">' in html
    assert '<input type="hidden" name="tab" value="images">' in html


def test_video_results_show_their_length_and_no_poster(client, media):
    html = client.get("/", {"q": "lighthouse", "tab": "videos"}).content.decode()
    assert re.findall(r'class="duration">Video, ([0-9:]+)</span>', html) == [
        "3:00", "14:00", "50:00"]
    assert "cdn.example.test" not in html
    assert '<select id="duration" name="duration">' in html
    assert 'id="tab-videos"' in html and 'href="/?q=lighthouse&amp;tab=images"' in html


def test_tab_links_keep_the_query_and_drop_another_tabs_filter(client, media):
    html = client.get("/", {"q": "lighthouse", "tab": "images", "size": "small",
                            "num": "5"}).content.decode()
    links = dict(re.findall(r'<a href="([^"]+)" id="tab-(\w+)"', html))
    assert {v: k for k, v in links.items()} == {
        "all": "/?q=lighthouse&amp;num=5", "videos": "/?q=lighthouse&amp;num=5&amp;tab=videos",
        "news": "/?q=lighthouse&amp;num=5&amp;tab=news"}


def test_cached_image_refuses_what_is_not_a_stored_image(client, media):
    for url in ("http://video.example.test/short.html", "http://img.example.test/none.png",
                "ftp://img.example.test/lighthouse-small.png", "", "javascript:alert(1)"):
        response = client.get("/cache/image", {"url": url})
        assert response.status_code == 404, url
        assert response["Content-Type"].startswith("text/plain")
    assert client.get("/cache/image", {"url": "http://img.example.test/lighthouse-small.png",
                                       "its": "123"}).status_code == 404
    assert client.post("/cache/image").status_code == 405


@pytest.mark.parametrize("value", ODD)
def test_odd_tab_values_are_never_a_server_error(client, media, value):
    for name in ("tab", "size", "duration"):
        for fmt in ("", "json", "rss"):
            response = client.get("/", {"q": "lighthouse", "tab": "images", name: value,
                                        "f": fmt})
            assert response.status_code == 200, (name, value, fmt)
    assert client.get("/cache/image", {"url": value, "its": value}).status_code == 404
    assert len(urls(client, tab=value)) == (3 if value == "images" else 8)
