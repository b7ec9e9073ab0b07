"""A reader's search settings, kept in a cookie: safe search, the result language, the time
period, results per page and whether results open in a new tab.

Layer: Django glue of the ``ranking`` app. The settings page (:func:`ranking.searchpage.views.
settings_page`) writes the cookie ``COOKIE`` (the settings as a query string, a year long,
``SameSite=Lax``); every search reads it through :func:`asked`, where a value in the request's
own query string wins (a link such as "safe search off" or a form's filter overrides the
cookie for that search). Bad values in the cookie are dropped, as if it did not hold them.
The interface language is Django's own cookie (``LANGUAGE_COOKIE_NAME``), read by
``LocaleMiddleware``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

from django.http import HttpRequest

from ranking.core.query.periods import PERIOD_DAYS

COOKIE = "search_settings"
COOKIE_AGE = 365 * 24 * 3600
NUM_CHOICES = (10, 20, 30, 50, 100)
KEYS = ("safe", "lang", "t", "num", "nt")
_LANGUAGE_TAG = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{1,8})?$")


def _valid(name: str, value: str) -> bool:
    if name == "safe":
        return value in ("on", "off")
    if name == "lang":
        return value == "all" or _LANGUAGE_TAG.match(value) is not None
    if name == "t":
        return value in PERIOD_DAYS
    if name == "num":
        return value.isascii() and value.isdigit() and int(value) in NUM_CHOICES
    if name == "nt":
        return value == "1"
    return False


def cookie_settings(request: HttpRequest) -> dict[str, str]:
    """The valid settings the request's cookie holds (name -> value)."""
    raw = request.COOKIES.get(COOKIE, "")[:500]
    kept: dict[str, str] = {}
    for name, value in parse_qsl(raw, keep_blank_values=False):
        if name in KEYS and _valid(name, value):
            kept[name] = value
    return kept


def asked(request: HttpRequest, name: str, default: str = "") -> str:
    """``name``'s value for this search: the query string's when it has one, else the
    cookie's, else ``default``."""
    if name in request.GET:
        return request.GET.get(name, default)
    return cookie_settings(request).get(name, default)


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """What the settings page shows and saves (empty strings: the site's defaults)."""

    safe: str = "on"
    lang: str = ""
    t: str = ""
    num: str = ""
    nt: str = ""

    @property
    def new_tab(self) -> bool:
        return self.nt == "1"

    def cookie_value(self) -> str:
        return urlencode({k: getattr(self, k) for k in KEYS if getattr(self, k)})


def settings_of(request: HttpRequest) -> SearchSettings:
    """The reader's settings as the cookie holds them."""
    return SearchSettings(**cookie_settings(request))


def settings_from_form(data: dict[str, str]) -> SearchSettings:
    """The settings a posted form asks for, each invalid value replaced by its default."""
    return SearchSettings(**{k: data.get(k, "") for k in KEYS if _valid(k, data.get(k, ""))})
