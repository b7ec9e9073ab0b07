"""Linear-time regular expressions for what crawl managers type: scraper signatures, page-rule
patterns and site-rule patterns.

Layer: ``crawler.core``. These patterns run on every fetched page (or url), so a pattern with
catastrophic backtracking such as ``(\\w+\\s?)+$`` would stall a fetcher for minutes on one page.
They are compiled with RE2 (the ``google-re2`` package), whose matching time is linear in the
text. RE2 has no backreferences (``\\1``, ``(?P=name)``) and no lookarounds (``(?=``, ``(?!``,
``(?<=``, ``(?<!``): :func:`compile_linear` refuses them with :class:`LinearRegexError`, whose
message names the construct, so the validators can tell the manager what to change.

Contract: ``compile_linear(pattern, flags)`` returns an object with ``search``, ``finditer`` and
``sub`` (Python ``\\g<n>`` templates); ``flags`` is any of ``i m s x`` as in Python. RE2 classes
such as ``\\w`` and ``\\b`` are ASCII-only, unlike Python's.
"""

from __future__ import annotations

from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the error is raised to the caller; RE2 need not print it too

_INLINE_FLAGS = frozenset("ims")

_HINTS = (
    ("(?=", "lookahead (?=...) is not supported (patterns must run in linear time)"),
    ("(?!", "negative lookahead (?!...) is not supported (patterns must run in linear time)"),
    ("(?<=", "lookbehind (?<=...) is not supported (patterns must run in linear time)"),
    ("(?<!", "negative lookbehind (?<!...) is not supported (patterns must run in linear time)"),
    ("(?P=", "backreferences such as (?P=name) are not supported "
             "(patterns must run in linear time)"),
)


class LinearRegexError(ValueError):
    """A pattern RE2 cannot compile; ``message`` says what is wrong in words."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


def _strip_verbose(pattern: str) -> str:
    """Python's ``x`` flag by hand (RE2 has none): drop unescaped whitespace and ``#``
    comments outside character classes."""
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            out.append(pattern[index:index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in " \t\r\n\f\v":
            index += 1
            continue
        elif char == "#":
            end = pattern.find("\n", index)
            index = len(pattern) if end < 0 else end + 1
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _explain(pattern: str, raw: str) -> str:
    for construct, hint in _HINTS:
        if construct in pattern:
            return hint
    if raw.startswith("invalid escape sequence: \\") and raw[-1:].isdigit():
        return (f"backreferences such as {raw.split(': ', 1)[1]} are not supported "
                "(patterns must run in linear time)")
    return raw


def compile_linear(pattern: str, flags: str = "") -> Any:
    """``pattern`` compiled by RE2 with Python-style ``flags`` (``i m s x``), or
    :class:`LinearRegexError` explaining why RE2 refuses it."""
    if "x" in flags:
        pattern = _strip_verbose(pattern)
    inline = "".join(sorted(set(flags) & _INLINE_FLAGS))
    source = f"(?{inline}){pattern}" if inline else pattern
    try:
        return re2.compile(source, _OPTIONS)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else str(exc)
        raw = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        raise LinearRegexError(_explain(pattern, raw)) from None
