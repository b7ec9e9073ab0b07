"""The Images, Videos and News tabs of the search page (issue 37, items 1 and 2), over the
meta words the index holds: ``media:image-small/-medium/-large`` (and ``media:image`` for images of unknown
size) that the image processor gives image documents, ``media:video`` and the ``duration:``
words the Open Graph video scraper gives video pages (``crawler.core.processing``).

Layer: Django glue of the ``ranking`` app. :func:`ranking.core.query.tabs.tab_words` turns the
tab and its filter (``size`` for images, ``duration`` for videos) into the words searched;
here are their labels, the tabs' links (:func:`tab_links`), the results' thumbnails and
lengths, the News tab's sources and dates (:func:`decorate`; the News tab searches the news
index: ``ranking.searchpage.news``), and :func:`cached_image`, which serves an image result's
thumbnail from the crawler's stored copy of the image: the page never loads a third-party
image (its Content-Security-Policy allows images from this site only), and an image the
crawler kept no copy of is shown as its name, without a picture. The images are shown as
stored, scaled by the browser (no resizing library is a dependency).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from indexer.core.errors import CorruptIndexError
from ranking.core.errors import NoIndexError
from ranking.core.shard.candidates import ShardClient
from ranking.page import ResultView, cached_copy, find_stored_page
from ranking.params import is_staff, parse_int
from ranking.search_service import search_service

from .appearance import logo_type
from .news import NewsFacts

TAB_LABELS = {"": _("All"), "images": _("Images"), "videos": _("Videos"), "news": _("News")}
SIZE_LABELS = {"": _("Any size"), "small": _("Small"), "medium": _("Medium"),
               "large": _("Large")}
DURATION_LABELS = {"": _("Any length"), "short": _("Under 5 minutes"),
                   "medium": _("5 to 20 minutes"), "long": _("Over 20 minutes")}
_WEBP = re.compile(rb"^RIFF....WEBP", re.DOTALL)


def image_type(data: bytes) -> str | None:
    """The content type of a PNG, JPEG, GIF or WebP image, else None (an SVG, which can hold
    scripts, is never served)."""
    return logo_type(data) or ("image/webp" if _WEBP.match(data[:12]) else None)


def minutes(seconds: object) -> str:
    """A video's length as ``m:ss`` (``h:mm:ss`` from an hour), "" when not a number."""
    try:
        total = int(float(str(seconds)))
    except ValueError:
        return ""
    if total <= 0:
        return ""
    hours, rest = divmod(total, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else \
        f"{rest // 60}:{rest % 60:02d}"


@require_GET
def cached_image(request: HttpRequest) -> HttpResponse:
    """``GET /cache/image?url=&its=``: the stored copy of an image result (404 when there is
    none, it may not be archived, or it is not a PNG, JPEG, GIF or WebP image)."""
    url = request.GET.get("url", "").strip()[:2048]
    data = None
    if url.startswith(("http://", "https://")):
        try:
            _, stored, shards = search_service().stored_page(
                url, parse_int(request.GET.get("its"), None), staff=is_staff(request))
            if stored is not None and stored.archivable and stored.has_cache:
                data = cached_copy(shards, stored)
        except (NoIndexError, CorruptIndexError, OSError, ValueError):
            data = None  # no index, or a damaged or unreadable record: no image to serve
    kind = image_type(data) if data else None
    if kind is None:
        response = HttpResponse("no stored image", content_type="text/plain; charset=utf-8",
                                status=404)
    else:
        response = HttpResponse(data, content_type=kind)
        response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


def tab_links(params: dict[str, str], current: str) -> list[dict[str, str | bool]]:
    """The tabs above the results: each one's label, link (``params`` with the tab, without
    another tab's filter or the offset) and whether it is the one shown."""
    keep = {k: v for k, v in params.items() if k not in ("tab", "size", "duration", "limit")}
    return [{"tab": tab, "label": str(label), "current": tab == current,
             "href": "/?" + urlencode({**keep, **({"tab": tab} if tab else {})})}
            for tab, label in TAB_LABELS.items()]


def decorate(views: list[ResultView], tab: str, its: int | None,
             shards: list[ShardClient], news: Mapping[str, NewsFacts] | None = None) -> None:
    """Give the Images tab's results their thumbnail (the stored copy, when the page links
    one), the Videos tab's their length (the video scraper's ``DURATION`` field, read
    from the stored summaries of this page's results only) and the News tab's their source
    and publication time (``news``, by url), without the links into the crawls' index."""
    for view in views:
        facts = news.get(view.result.url) if news else None
        if facts is not None:  # the crawls' pages of its site, similar pages, inlinks: none
            view.site_href = view.similar_href = view.inlinks_href = view.cache_href = ""
            view.news_source = facts.source
            view.published = datetime.fromtimestamp(facts.published, UTC) \
                if facts.published > 0 else None
        if tab == "images" and view.cache_href:
            view.thumb_href = "/cache/image?" + urlencode(
                {"url": view.result.url, **({"its": str(its)} if its is not None else {})})
        elif tab == "videos":
            try:
                stored = find_stored_page(shards, view.result.url)
            except (CorruptIndexError, OSError):
                stored = None
            fields = stored.summary.get("fields") if stored is not None else None
            if isinstance(fields, dict):
                view.duration = minutes(fields.get("DURATION", ""))
