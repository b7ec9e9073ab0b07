"""Pages of the search site's own settings: the reader's search settings (``/settings``), and
the admin's appearance served to the pages (``/site/logo``, ``/site/appearance.css``).

Layer: Django glue of the ``ranking`` app (:mod:`ranking.urls` routes here).

* ``GET /settings`` the settings form (safe search, result language, time period, results per
  page, new tab, interface language), filled from the reader's cookie; ``POST /settings``
  (CSRF-protected) keeps the valid values in the cookie (:mod:`.preferences`), the interface
  language in Django's language cookie, and goes back to the search (``q`` kept) with 303.
  An invalid value is dropped (its default kept), never an error page.
* ``GET /site/logo`` the uploaded logo (404 without one); ``GET /site/appearance.css`` the
  colours as CSS custom properties. Both may be cached: their urls carry a version that
  changes with the appearance.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_http_methods

from ranking.page import LANGUAGES
from ranking.search_service import search_service

from .appearance import logo_get
from .preferences import (
    COOKIE,
    COOKIE_AGE,
    NUM_CHOICES,
    settings_from_form,
    settings_of,
)

PERIOD_LABELS = {"": _("Any time"), "day": _("Past day"), "week": _("Past week"),
                 "month": _("Past month"), "year": _("Past year")}
SAME_SITE_PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; "
                      "img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                      "form-action 'self'; frame-ancestors 'none'")


def periods() -> list[tuple[str, str]]:
    """(value, label) of each time period, "" (any time) first."""
    return list(PERIOD_LABELS.items())


def _back(query: str) -> str:
    return "/?" + urlencode({"q": query}) if query.strip() else "/"


@require_http_methods(["GET", "POST"])
def settings_page(request: HttpRequest) -> HttpResponse:
    query = (request.POST.get("q") if request.method == "POST" else request.GET.get("q")) or ""
    query = query[:1000]
    if request.method == "POST":
        chosen = settings_from_form({k: str(v)[:20] for k, v in request.POST.items()})
        response = HttpResponse(status=303)
        response["Location"] = _back(query)
        response.set_cookie(COOKIE, chosen.cookie_value(), max_age=COOKIE_AGE,
                            samesite="Lax", httponly=True, secure=request.is_secure())
        language = request.POST.get("language", "")
        if language in dict(settings.LANGUAGES):
            response.set_cookie(settings.LANGUAGE_COOKIE_NAME, language, max_age=COOKIE_AGE,
                                samesite="Lax", secure=request.is_secure())
        return response
    context = {
        "query": query, "chosen": settings_of(request), "periods": periods(),
        "nums": NUM_CHOICES, "languages": LANGUAGES,
        "default_num": search_service().options().results_per_page,
        "ui_languages": settings.LANGUAGES, "ui_language": translation.get_language(),
        "back_href": _back(query),
    }
    response = render(request, "ranking/settings.html", context)
    response["Content-Security-Policy"] = SAME_SITE_PAGE_CSP
    return response


@require_GET
@cache_control(max_age=86400, public=True)
def logo(request: HttpRequest) -> HttpResponse:
    found = logo_get()
    if found is None:
        raise Http404("no logo")
    data, kind = found
    response = HttpResponse(data, content_type=kind)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


@require_GET
@cache_control(max_age=86400, public=True)
def appearance_css(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(search_service().appearance().css(),
                            content_type="text/css; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    return response
