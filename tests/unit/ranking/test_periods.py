"""The search settings' time periods as date: words (ranking.core.query.periods), checked
against a brute-force oracle: the days the words cover, and Yioop's if:/#n# rewriting words
(ranking.core.query.conditionals) through the parser."""

from __future__ import annotations

import datetime as dt

import pytest

from ranking.core.query.conditionals import expand_conditionals, strip_ranges
from ranking.core.query.parser import QueryParser
from ranking.core.query.periods import MAX_DAY_WORDS, PERIOD_DAYS, period_words, with_period


def covered(words: tuple[str, ...], around: dt.date) -> set[dt.date]:
    """The days within two years before ``around`` (to a year after) that a page fetched on
    them would match one of ``words`` (the crawler's date: words: Y, Y-m, Y-m-d)."""
    days = set()
    day = around - dt.timedelta(days=800)
    while day <= around + dt.timedelta(days=400):
        mine = {f"date:{day:%Y}", f"date:{day:%Y-%m}", f"date:{day:%Y-%m-%d}"}
        if mine & set(words):
            days.add(day)
        day += dt.timedelta(days=1)
    return days


@pytest.mark.parametrize("today", [dt.date(2026, 11, 29), dt.date(2026, 1, 1),
                                   dt.date(2026, 3, 1), dt.date(2024, 2, 29),
                                   dt.date(2026, 12, 31), dt.date(2026, 7, 4)])
@pytest.mark.parametrize("period", sorted(PERIOD_DAYS))
def test_words_cover_the_window_and_at_most_a_month_more(today, period):
    words = period_words(period, today)
    days = {d for d in covered(words, today) if d <= today}
    start = today - dt.timedelta(days=PERIOD_DAYS[period] - 1)
    window = {start + dt.timedelta(days=i) for i in range(PERIOD_DAYS[period])}
    assert window <= days, sorted(window - days)[:3]
    extra = days - window
    # widened only to the first day of the window's oldest month
    assert not extra or min(extra) >= start.replace(day=1), min(extra)
    assert sum(1 for w in words if w.count("-") == 2) <= MAX_DAY_WORDS


def test_exact_words_on_known_days():
    assert period_words("day", dt.date(2026, 11, 29)) == ("date:2026-11-29", "date:2026-11-28")
    assert period_words("day", dt.date(2026, 1, 1)) == ("date:2026", "date:2025-12-31")
    assert period_words("week", dt.date(2026, 11, 3)) == (
        "date:2026-11", "date:2026-10-31", "date:2026-10-30", "date:2026-10-29",
        "date:2026-10-28")
    # 31 days back from 15 November: November's word, then October's 16th..31st widened to
    # the whole of October (16 day words would be too many)
    assert period_words("month", dt.date(2026, 11, 15)) == ("date:2026-11", "date:2026-10")
    assert period_words("year", dt.date(2026, 11, 29)) == (
        "date:2026", "date:2025-12", "date:2025-11-30", "date:2025-11-29")
    assert period_words("", dt.date(2026, 11, 29)) == ()
    assert period_words("decade", dt.date(2026, 11, 29)) == ()


def test_with_period_copies_every_disjunct():
    assert with_period("a b", ("date:1", "date:2")) == "a b date:1 | a b date:2"
    assert with_period("a | b", ("date:1",)) == "a date:1 | b date:1"
    assert with_period('"x | y" z', ("date:1",)) == '"x | y" z date:1'
    assert with_period("a", ()) == "a"


def test_period_query_parses_to_one_disjunct_per_word():
    parsed = QueryParser().parse(with_period("lamp", period_words("day", dt.date(2026, 1, 1))))
    assert [d.meta for d in parsed.disjuncts] == [("date:2026",), ("date:2025-12-31",)]
    assert all(d.terms == ("lamp",) for d in parsed.disjuncts)


def test_conditionals_as_yioop_documents_them():
    assert expand_conditionals("jaguar car if:car!-animal") == "jaguar car -animal"
    assert expand_conditionals("jaguar if:car!-animal") == "jaguar"
    assert expand_conditionals("jaguar if:car!-animal!cat+animal") == "jaguar cat animal"
    assert expand_conditionals("big Cats if:big+cat!lion") == "big Cats lion"
    assert expand_conditionals("plain words") == "plain words"
    assert expand_conditionals("if:") == ""


def test_conditionals_and_ranges_are_never_searched_as_words():
    parser = QueryParser()
    parsed = parser.parse("jaguar car if:car!-animal")
    assert parsed.disjuncts[0].terms == ("jaguar", "car")
    assert parsed.disjuncts[0].negated_terms == ("anim",)
    ranged = parser.parse("lamp #3# fog")
    assert ranged.disjuncts[0].terms == ("lamp", "fog")
    assert any("result ranges (#3#) are not supported" in m for m in ranged.messages)
    assert strip_ranges("a #2# b #10#") == ("a b", ("#2#", "#10#"))


def test_mix_word_reaching_the_parser_says_where_it_works():
    parsed = QueryParser().parse("lamp m:my.mix")
    assert parsed.disjuncts[0].terms == ("lamp",)
    assert parsed.messages == ("m:my.mix chooses a crawl mix only in the search box "
                               "(ignored here)",)
    assert not any("not supported" in m for m in parsed.messages)


def test_any_language_still_stems_the_words():
    """lang:all (the "Any language" filter) once made the words be analysed in a language
    called "all": no stemming, so "lighthouse" missed the index's "lighthous"."""
    parser = QueryParser()
    parsed = parser.parse("lighthouse lang:all")
    assert parsed.disjuncts[0].terms == parser.parse("lighthouse").disjuncts[0].terms
    assert parsed.disjuncts[0].meta == ("lang:all",)
    assert not parsed.disjuncts[0].auto_meta or all(
        not w.startswith("lang:") for w in parsed.disjuncts[0].auto_meta)
