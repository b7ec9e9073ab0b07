"""The search request's parameters, parsed once: :func:`search_params` turns the query string
into a :class:`SearchParams`, with a message for each value it could not use.

Layer: glue of the ``ranking`` app, between the views (which hand it the request) and the
search service (:mod:`ranking.search_service`, which takes the parsed values). Parameters:
``q`` the query, ``num`` results per page (default: Page Options' results per page, at most
``MAX_NUM``), ``limit`` the offset of the first, ``its`` a crawl timestamp, ``safe=off`` safe
search off, ``lang=xx`` a language filter (``all``: any language), ``nfpr=1`` the query as
typed, never a spelling correction of it, ``mix=NAME`` a crawl mix to search (also written in
the query as ``m:NAME`` or ``mix:NAME``, the seed's mix operator), ``t=day|week|month|year``
pages fetched in that time period (``date:`` words, :mod:`ranking.core.query.periods`). A
parameter missing from the query string is read from the reader's saved settings
(:mod:`ranking.searchpage.preferences`): ``safe``, ``lang``, ``t`` and ``num``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from django.http import HttpRequest

from ranking.core.query.numerals import ascii_int
from ranking.core.query.periods import PERIOD_DAYS, period_words, with_period
from ranking.core.query.tabs import DURATIONS, IMAGE_SIZES, TABS, tab_words
from ranking.searchpage.preferences import asked

MAX_NUM = 100
MAX_QUERY_CHARS = 1000
# a mix's name is a slug, but any name typed is taken out of the query (and answered "no such
# mix") rather than searched as words
_MIX_WORD = re.compile(r"(?:^|\s)(?:m|mix):([^\s\"|]+)(?=\s|$)", re.IGNORECASE)


def parse_int(value: str | None, default: int | None) -> int | None:
    """``value`` as an int of ASCII digits (:func:`ranking.core.query.numerals.ascii_int`), else
    ``default``."""
    return ascii_int(value, default)


def search_filters(request: HttpRequest) -> tuple[bool, str]:
    """(safe search on, language filter) from ``safe`` and ``lang``."""
    safe = asked(request, "safe", "on").lower() not in ("off", "0", "false", "no")
    lang = asked(request, "lang").strip().lower()
    if lang and not (lang == "all" or (2 <= len(lang) <= 8 and lang.replace("-", "").isalnum())):
        lang = ""
    return safe, lang


def search_period(request: HttpRequest) -> str:
    """The time period asked (``t``: a key of ``PERIOD_DAYS``), else "" (any time)."""
    period = asked(request, "t").strip().lower()
    return period if period in PERIOD_DAYS else ""


def search_tab(request: HttpRequest) -> tuple[str, str, str]:
    """(tab, image size, video duration) asked: ``tab=images|videos``, ``size``,
    ``duration`` (:mod:`ranking.core.query.tabs`); "" for each missing or unknown."""
    values = (request.GET.get("tab", ""), request.GET.get("size", ""),
              request.GET.get("duration", ""))
    return tuple(v if v in allowed else "" for v, allowed in  # type: ignore[return-value]
                 zip(values, (TABS, IMAGE_SIZES, DURATIONS), strict=True))


def effective_query(query: str, lang: str, period: tuple[str, ...] = (),
                    media: tuple[str, ...] = ()) -> str:
    """The query searched: the language filter becomes a ``lang:`` meta word unless the query
    has one; a tab's ``media:`` alternatives and a time period's ``date:`` words each make a
    copy of every disjunct (:func:`ranking.core.query.periods.with_period`)."""
    if lang and "lang:" not in query.lower():
        query = f"{query} lang:{lang}"
    return with_period(with_period(query, media), period)


def split_mix(query: str) -> tuple[str, str | None]:
    """(``query`` without its ``m:NAME`` / ``mix:NAME`` word, the last such NAME or None)."""
    names = _MIX_WORD.findall(query)
    if not names:
        return query, None
    return " ".join(_MIX_WORD.sub(" ", query).split()), names[-1]


def is_staff(request: HttpRequest) -> bool:
    """Whether the request comes from a logged-in staff user, who may search every crawl and
    crawl mix (anyone else only those open to anyone: :mod:`ranking.search_service`)."""
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_staff)


def forced(request: HttpRequest) -> bool:
    """``nfpr=1``: search the query as typed, never a spelling correction of it."""
    return request.GET.get("nfpr", "").lower() in ("1", "true", "on", "yes")


@dataclass(frozen=True, slots=True)
class SearchParams:
    """One search as asked: ``query`` as typed (cut to ``MAX_QUERY_CHARS``), ``num`` results
    from ``offset``, crawl ``its`` (None: the newest), the filters, ``forced`` (``nfpr``), and
    ``messages`` about the values that were replaced by defaults."""

    query: str
    num: int
    offset: int
    its: int | None
    safe: bool
    lang: str
    forced: bool
    messages: tuple[str, ...] = ()
    mix: str | None = None  # a crawl mix's name: search it instead of the chosen index
    staff: bool = False  # asked by a staff user: any crawl or mix may be searched
    period: str = ""  # the time period asked ("": any time)
    period_words: tuple[str, ...] = ()  # its date: words (ranking.core.query.periods)
    media_words: tuple[str, ...] = ()  # the tab's alternatives (ranking.core.query.tabs)
    tab: str = ""  # the tab asked ("": All; "news" searches the news index)

    @property
    def searched(self) -> str:
        """The query searched (:func:`effective_query`)."""
        return effective_query(self.query, self.lang, self.period_words, self.media_words)

    def within_filters(self, text: str) -> str:
        """``text`` (a query with its language filter) copied for the tab's and the time
        period's alternatives, as :attr:`searched` is."""
        return with_period(with_period(text, self.media_words), self.period_words)


def search_params(request: HttpRequest, results_per_page: int) -> SearchParams:
    """The request's search, ``results_per_page`` (Page Options') when ``num`` is not given."""
    query = request.GET.get("q", "")
    messages: list[str] = []
    if len(query) > MAX_QUERY_CHARS:
        query = query[:MAX_QUERY_CHARS]
        messages.append(f"the query was shortened to its first {MAX_QUERY_CHARS} characters")
    query, mix = split_mix(query)
    mix = mix or request.GET.get("mix", "").strip()[:100] or None
    default_num = max(1, min(results_per_page or 10, MAX_NUM))
    num_asked = asked(request, "num") or None
    num = parse_int(num_asked, None)
    offset = parse_int(request.GET.get("limit"), None)
    its = parse_int(request.GET.get("its"), None)
    for name, value, parsed in (("num", num_asked, num),
                                ("limit", request.GET.get("limit"), offset)):
        if (value not in (None, "") and parsed is None) or (parsed is not None and parsed < 0):
            messages.append(f"{name}={value} is not a valid number (default used)")
    num = min(max(num if num is not None and num >= 0 else default_num, 0), MAX_NUM)
    offset = offset if offset is not None and offset >= 0 else 0
    if request.GET.get("its") and its is None:
        messages.append(f"its={request.GET.get('its')} is not a crawl timestamp (newest used)")
    safe, lang = search_filters(request)
    period = search_period(request)
    return SearchParams(query, num, offset, its, safe, lang, forced(request), tuple(messages),
                        mix, is_staff(request), period,
                        period_words(period, dt.datetime.now(dt.UTC).date()),
                        tab_words(*search_tab(request)), search_tab(request)[0])
