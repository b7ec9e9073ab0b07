"""Snippets and highlighted titles of results (../shared/yioop-notes.md §8).

Layer: ``ranking.core``. The pipeline calls :func:`snippet` and :func:`title_html` for the final
top results only, on their stored summaries.

* The text is the summary description; for a group, the descriptions of the page and its link
  records joined with `` .. `` (the caller joins them).
* Each source (a piece between `` .. ``) shorter than ``MIN_SNIPPET_LENGTH`` is taken whole when it
  holds a query word; otherwise every window of up to ``snippet_left`` characters before a match,
  the match, and up to ``snippet_right`` characters after, cut at word boundaries. Windows are
  joined with `` ... `` (duplicates skipped) up to ``description_length`` characters, trimmed back
  to a space. With no match at all, the start of the text.
* A query word matches at a word boundary and may run on for up to 3 more word characters, so a
  stem matches its inflections (``measur`` matches ``measures``). Matches are wrapped in ``<b>``;
  everything else is HTML-escaped, so a page that contains ``<script>`` shows it as text.
* NOSNIPPET (a robots meta of the page) gives no snippet at all.
* An empty title becomes the first 20 characters of the description and an ellipsis, else the
  url.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable, Sequence

from .options import SearchOptions

MIN_SNIPPET_LENGTH = 100
TITLE_FALLBACK_CHARS = 20
ELLIPSIS = "\u2026"
_SPACE = re.compile(r"\s+")


def highlight_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """A case-insensitive pattern for query words and stems (each may run on 3 characters).
    Built once per set of words (every result of a query highlights the same words)."""
    return _pattern(frozenset(w.lower() for w in words if w and not w.startswith("_")))


@functools.lru_cache(maxsize=256)
def _pattern(words: frozenset[str]) -> re.Pattern[str] | None:
    alts = sorted(words, key=lambda w: (-len(w), w))
    alts = [a for a in alts if re.fullmatch(r"\w+", a)]
    if not alts:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, alts)) + r")\w{0,3}(?!\w)",
                      re.IGNORECASE)


def highlight(text: str, pattern: re.Pattern[str] | None) -> str:
    """HTML-escape ``text`` and wrap the matches of ``pattern`` in ``<b>``."""
    if pattern is None:
        return html.escape(text)
    out, last = [], 0
    for m in pattern.finditer(text):
        out.append(html.escape(text[last:m.start()]))
        out.append("<b>" + html.escape(m.group(0)) + "</b>")
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def _trim_to_space(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space > limit // 2 else cut


def _windows(source: str, pattern: re.Pattern[str], left: int, right: int,
             budget: int) -> list[str]:
    """Windows around matches, lazily, until ``budget`` characters are collected (a stored
    description can be long: never scan further than needed)."""
    out: list[str] = []
    have = 0
    for m in pattern.finditer(source):
        if have >= budget:
            break
        start = max(0, m.start() - left)
        if start > 0:
            space = source.find(" ", start, m.start())
            start = space + 1 if space != -1 else m.start()
        end = min(len(source), m.end() + right)
        if end < len(source):
            space = source.rfind(" ", m.end(), end)
            end = space if space != -1 else m.end()
        piece = _SPACE.sub(" ", source[start:end]).strip()
        if piece and piece not in out:
            out.append(piece)
            have += len(piece) + 5
    return out


def snippet_text(text: str, words: Sequence[str], options: SearchOptions) -> str:
    """The plain (unescaped) snippet of ``text`` for the query words."""
    limit = options.description_length
    text = text or ""
    # joined group descriptions are split back; an ellipsis never splits sources
    sources = [s.strip() for s in text.split(" .. ") if s.strip()]
    pattern = highlight_pattern(words)
    if pattern is None or not sources:
        return _start(text, limit)
    pieces: list[str] = []
    for source in sources:
        if not pattern.search(source):
            continue
        if len(source) < MIN_SNIPPET_LENGTH:
            found = [_SPACE.sub(" ", source)]
        else:
            have = sum(len(p) + 5 for p in pieces)
            found = _windows(source, pattern, options.snippet_left, options.snippet_right,
                             limit - have)
        for piece in found:
            if piece and piece not in pieces:
                pieces.append(piece)
        if sum(len(p) + 5 for p in pieces) >= limit:
            break
    if not pieces:
        return _start(text, limit)
    return _trim_to_space(" ... ".join(pieces), limit)


def _start(text: str, limit: int) -> str:
    return _trim_to_space(_SPACE.sub(" ", text[:limit * 2]).strip(), limit)


def snippet(text: str, words: Sequence[str], options: SearchOptions,
            robot_metas: Iterable[str] = ()) -> str:
    """The highlighted, escaped snippet HTML ("" under NOSNIPPET)."""
    if any(m.upper() in ("NOSNIPPET", "NONE") for m in robot_metas):
        return ""
    return highlight(snippet_text(text, words, options), highlight_pattern(words))


def title_text(title: str, description: str, url: str) -> str:
    title = _SPACE.sub(" ", title or "").strip()
    if title:
        return title
    description = _SPACE.sub(" ", (description or "")[:200]).strip()
    if description:
        return description[:TITLE_FALLBACK_CHARS].rstrip() + ELLIPSIS
    return url


def title_html(title: str, description: str, url: str, words: Sequence[str]) -> str:
    return highlight(title_text(title, description, url), highlight_pattern(words))
