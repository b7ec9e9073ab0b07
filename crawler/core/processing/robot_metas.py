"""Robot directives from meta tags (and the X-Robots-Tag header).

Layer: ``crawler.core``. The seed: any ``<meta>`` whose name contains "robot", matched without
regard to case (so ``robots``, ``googlebot-robots`` and typos such as ``robot`` all count); the
directives are the comma- or space-separated words of its ``content``, upper-cased. Known ones
are NOINDEX, NOFOLLOW, NOARCHIVE, NOSNIPPET, NONE and Yioop's JUSTFOLLOW; ``ALL``/``INDEX``/
``FOLLOW`` say nothing and are dropped, unknown words are dropped too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from crawler.core.processing.page import ROBOT_DIRECTIVES

_SPLIT = re.compile(r"[\s,;]+")


def parse_directives(content: str) -> frozenset[str]:
    """The known directives in a meta ``content`` or header value."""
    words = {word.upper() for word in _SPLIT.split(content or "") if word}
    # "noindex: true" / "max-snippet:0" style values: keep the name before a colon.
    words |= {word.split(":", 1)[0] for word in words if ":" in word}
    if "MAX-SNIPPET" in words and re.search(r"max-snippet\s*:\s*0\b", content, re.I):
        words.add("NOSNIPPET")
    return frozenset(words & ROBOT_DIRECTIVES)


def is_robot_meta(name: str) -> bool:
    """True when a meta ``name`` addresses robots (contains "robot", any case)."""
    return "robot" in (name or "").lower()


def robot_metas(metas: Iterable[tuple[str, str]]) -> frozenset[str]:
    """Directives of every ``(name, content)`` meta pair that addresses robots."""
    found: set[str] = set()
    for name, content in metas:
        if is_robot_meta(name):
            found |= parse_directives(content)
    return frozenset(found)


def header_directives(value: str) -> frozenset[str]:
    """Directives of an ``X-Robots-Tag`` header (``googlebot: noindex`` reads as NOINDEX)."""
    return parse_directives(value)
