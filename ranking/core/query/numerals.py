"""Numbers typed by people or sent by peers, read as ASCII only.

Layer: ``ranking.core`` (pure Python). ``str.isdigit()`` is true of ``"²"``, ``"١٢"`` or
``"１"``, and ``int()``/``float()`` accept some of those and refuse others, so a check with one
and a conversion with the other turned a query like ``i:²`` into a server error. Every number of
the query side (control words, request parameters, lexicon counts, HTTP heads of shard answers)
goes through these instead: ASCII digits 0-9, an optional sign where a sign makes sense, and a
bounded length, or it is not a number.
"""

from __future__ import annotations

import re

_DIGITS = re.compile(r"[0-9]{1,30}")
_SIGNED = re.compile(r"[+-]?[0-9]{1,30}")
_DECIMAL = re.compile(r"[+]?(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})")


def is_ascii_digits(text: str) -> bool:
    """True when ``text`` is 1 to 30 ASCII digits and nothing else."""
    return _DIGITS.fullmatch(text) is not None


def ascii_int(text: str | None, default: int | None = None, signed: bool = True) -> int | None:
    """``text`` (surrounding spaces allowed) as an int of ASCII digits, else ``default``."""
    if text is None:
        return default
    text = text.strip()
    if (_SIGNED if signed else _DIGITS).fullmatch(text) is None:
        return default
    return int(text)


def ascii_decimal(text: str) -> float | None:
    """``text`` as a non-negative decimal of ASCII digits (``1``, ``2.5``, ``.5``), else None."""
    if _DECIMAL.fullmatch(text) is None:
        return None
    return float(text)
