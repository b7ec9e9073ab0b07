"""Yioop's query rewriting words that are not searched: ``if:`` conditionals and ``#n#`` result
ranges.

Layer: ``ranking.core.query`` (pure Python), applied by the parser
(:mod:`ranking.core.query.parser`) before it reads words, as Yioop's PhraseModel does.

* ``if:<needle>!<then>!<else>`` (``+`` stands for a space in each part): when the rest of the
  query holds ``needle`` (case-insensitive, as text), ``then`` is added to the query, else
  ``else`` (either may be missing: nothing is added). Yioop uses them in crawl mixes' queries:
  ``jaguar car if:car!-animal`` searches ``jaguar car -animal``, ``jaguar if:car!-animal``
  searches ``jaguar``.
* ``#n#`` splits a query into parts, each owning the next ``n`` result slots (Yioop's
  presentation ranges). They are not supported here: :func:`strip_ranges` takes them out, so
  they are never searched as words, and says so.
"""

from __future__ import annotations

import re

_IF_WORD = re.compile(r"(?:^|(?<=\s))if:(\S*)", re.IGNORECASE)
_RANGE = re.compile(r"#(\d+)#")


def expand_conditionals(text: str) -> str:
    """``text`` with each ``if:`` word replaced by the words it adds (see the module)."""
    conditions = [m.group(1) for m in _IF_WORD.finditer(text)]
    if not conditions:
        return text
    rest = " ".join(_IF_WORD.sub(" ", text).split())
    added: list[str] = []
    for condition in conditions:
        parts = condition.split("!")
        needle = parts[0].replace("+", " ").strip().lower()
        chosen = 1 if needle and needle in rest.lower() else 2
        if len(parts) > chosen and parts[chosen]:
            added.append(parts[chosen].replace("+", " ").strip())
    return " ".join([rest, *added]).strip()


def strip_ranges(text: str) -> tuple[str, tuple[str, ...]]:
    """(``text`` without its ``#n#`` result ranges, the ranges taken out)."""
    found = tuple(m.group(0) for m in _RANGE.finditer(text))
    if not found:
        return text, ()
    return " ".join(_RANGE.sub(" ", text).split()), found
