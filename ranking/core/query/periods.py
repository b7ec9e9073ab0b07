"""Time periods of the search settings ("past week") as the ``date:`` meta words that cover them.

Layer: ``ranking.core.query`` (pure Python). The crawler indexes each page under the day, month
and year of its fetch (``date:2026``, ``date:2026-11``, ``date:2026-11-29``, UTC:
``crawler.core.processing.meta_words``); a meta word names one value, so a period is the
union of a few of them, searched as one ``|`` disjunct per word
(:func:`with_period`). :func:`period_words` covers the days from ``today - (days - 1)`` to
``today`` with the coarsest words that lie inside the window (a unit that reaches past today
is fine: nothing was fetched tomorrow). A window whose oldest month is partly covered would
take one word per day; when that is more than ``MAX_DAY_WORDS`` words, the whole month's word
is taken instead, so the window is widened to the start of that month (at most a month more).
"""

from __future__ import annotations

import datetime as dt

from ranking.core.query.parser import split_disjuncts

# the periods offered, as days counted back from today (today included)
PERIOD_DAYS = {"day": 2, "week": 7, "month": 31, "year": 366}
MAX_DAY_WORDS = 7
PREFIX = "date"


def _month_start(day: dt.date) -> dt.date:
    return day.replace(day=1)


def period_words(period: str, today: dt.date, prefix: str = PREFIX) -> tuple[str, ...]:
    """The meta words whose union holds every page fetched from ``PERIOD_DAYS[period] - 1``
    days before ``today`` to ``today`` (newest first); () for an unknown period (any time).
    ``day`` is today and yesterday: at least the past 24 hours, whatever the hour."""
    days = PERIOD_DAYS.get(period)
    if days is None:
        return ()
    start = today - dt.timedelta(days=days - 1)
    words: list[str] = []
    end = today  # the newest day not yet covered
    if today.replace(month=1, day=1) >= start:
        words.append(f"{prefix}:{today.year:04d}")
        end = today.replace(month=1, day=1) - dt.timedelta(days=1)
    while end >= start and _month_start(end) >= start:
        words.append(f"{prefix}:{end.year:04d}-{end.month:02d}")
        end = _month_start(end) - dt.timedelta(days=1)
    if end >= start:
        left = (end - start).days + 1
        if left > MAX_DAY_WORDS:
            words.append(f"{prefix}:{end.year:04d}-{end.month:02d}")
        else:
            words.extend(f"{prefix}:{day:%Y-%m-%d}"
                         for day in (end - dt.timedelta(days=i) for i in range(left)))
    return tuple(words)


def with_period(query: str, words: tuple[str, ...]) -> str:
    """``query`` kept to pages with one of ``words``: each ``|`` disjunct of the query once per
    word (``a | b`` with two words is four disjuncts); ``query`` itself when ``words`` is
    empty."""
    if not words:
        return query
    parts = [part.strip() for part in split_disjuncts(query)]
    return " | ".join(f"{part} {word}" for part in parts if part for word in words) or query
