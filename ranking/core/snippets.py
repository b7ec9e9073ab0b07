"""Snippets and highlighted titles of results (../shared/yioop-notes.md §8).

Layer: ``ranking.core``. The pipeline calls :func:`snippet` and :func:`title_html` for the final
top results only, on their stored summaries; a local shard calls :func:`body_windows` on the
streamed body of a page whose description holds no query word
(:meth:`ranking.core.shard.LocalShard.snippet_summaries`).

* The text is the summary description; for a group, the descriptions of the page and its link
  records joined with `` .. `` (the caller joins them). When no query word is in it, the
  ``excerpt`` (windows of the page's whole indexed text, the summary's ``body``) is used
  instead: with whole-page indexing a page matches on words past its 2,000-character
  description, and its snippet must still show one.
* Each source (a piece between `` .. ``) shorter than ``MIN_SNIPPET_LENGTH`` is taken whole when it
  holds a query word; otherwise every window of up to ``snippet_left`` characters before a match,
  the match, and up to ``snippet_right`` characters after, cut at word boundaries. Windows that
  overlap are merged into one; each is cleaned of markup debris (:mod:`ranking.core.debris`:
  pilcrows, navigation labels, breadcrumbs, a phrase repeated twice) and kept only when it still
  holds a query word and is not already shown (the same text, or inside a window already
  taken, compared case-insensitively). Windows are joined with `` ... `` up to
  ``description_length`` characters, trimmed back to a space. With no match at all, the
  cleaned start of the text.
* Matching never runs past what is needed: windows are found lazily and the search stops once
  the snippet's length is reached; a body is read chunk by chunk and left unread after that.
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
from collections.abc import Iterable, Iterator, Sequence

from .debris import clean, collapse_repeats
from .options import SearchOptions

MIN_SNIPPET_LENGTH = 100
TITLE_FALLBACK_CHARS = 20
ELLIPSIS = "\u2026"
JOIN = " ... "
PART = 800  # characters cleaned and searched at a time (a long text is read part by part)
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


def highlight_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """A case-insensitive pattern for query words and stems (each may run on 3 characters).
    Built once per set of words (every result of a query highlights the same words)."""
    return _pattern(_words(words))


def _words(words: Iterable[str]) -> tuple[str, ...]:
    """The query words a pattern matches: lower-cased, word characters only, longest first."""
    kept = {w.lower() for w in words if w and not w.startswith("_") and _WORD.fullmatch(w)}
    return tuple(sorted(kept, key=lambda w: (-len(w), w)))


@functools.lru_cache(maxsize=256)
def _pattern(alts: tuple[str, ...]) -> re.Pattern[str] | None:
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


class _Pieces:
    """The snippet's pieces so far: each holding a query word, none repeated."""

    __slots__ = ("pattern", "needles", "pieces", "folded", "length", "limit")

    def __init__(self, pattern: re.Pattern[str], limit: int, words: Sequence[str]) -> None:
        self.pattern = pattern
        self.needles = _words(words)
        self.pieces: list[str] = []
        self.folded: list[str] = []
        self.length = 0
        self.limit = limit

    @property
    def full(self) -> bool:
        return self.length >= self.limit

    def add(self, piece: str) -> None:
        piece = collapse_repeats(piece).strip(" |")
        if not piece or not self.pattern.search(piece):
            return
        folded = piece.casefold()
        if any(folded in seen for seen in self.folded):
            return  # the same fragment again (or a part of one already shown)
        for i in range(len(self.folded) - 1, -1, -1):
            if self.folded[i] in folded:  # a longer version of an earlier piece replaces it
                self.length -= len(self.pieces[i]) + len(JOIN)
                del self.pieces[i], self.folded[i]
        self.pieces.append(piece)
        self.folded.append(folded)
        self.length += len(piece) + len(JOIN)

    def add_windows(self, parts: Iterable[str], left: int, right: int) -> None:
        """Windows around the matches of each of ``parts`` (successive stretches of one
        text), each part cleaned of debris first when it holds a match; stops reading
        ``parts`` once full. A window does not cross from one part into the next."""
        for part in parts:
            if not self.may_match(part):
                continue
            part = clean(part, self.pattern)
            for start, end in _spans(part, self.pattern, left, right):
                self.add(part[start:end])
                if self.full:
                    return

    def may_match(self, text: str) -> bool:
        """Whether ``text`` may hold a match: a query word in its lower case, found by plain
        substring search (many times faster than the pattern, whose boundaries and case
        folding are then checked on the few texts that pass)."""
        low = text.lower()
        return any(n in low for n in self.needles) and self.pattern.search(text) is not None

    def text(self) -> str:
        return _trim_to_space(JOIN.join(self.pieces), self.limit)


def _spans(source: str, pattern: re.Pattern[str], left: int,
           right: int) -> Iterator[tuple[int, int]]:
    """(start, end) of the windows around the matches of ``pattern`` in ``source``, lazily,
    cut at spaces; overlapping windows come out merged."""
    current: list[int] | None = None
    for m in pattern.finditer(source):
        start = max(0, m.start() - left)
        if start > 0:
            space = source.find(" ", start, m.start())
            start = space + 1 if space != -1 else m.start()
        end = min(len(source), m.end() + right)
        if end < len(source):
            space = source.rfind(" ", m.end(), end)
            end = space if space != -1 else m.end()
        if current is not None and start <= current[1]:
            current[1] = max(current[1], end)
            continue
        if current is not None:
            yield current[0], current[1]
        current = [start, end]
    if current is not None:
        yield current[0], current[1]


def parts_of(chunks: Iterable[str], size: int = PART) -> Iterator[str]:
    """The text of ``chunks`` again as parts of about ``size`` characters or more, each cut
    after a space (never inside a word), read lazily."""
    buf = ""
    for chunk in chunks:
        buf = buf + chunk if buf else chunk
        at = 0  # parts are sliced off by position: the rest is not copied part after part
        while len(buf) - at >= size:
            cut = buf.rfind(" ", at + size // 2, at + size)
            if cut == -1:  # a very long word: cut at the space after it
                cut = buf.find(" ", at + size)
                if cut == -1:
                    break
            yield buf[at:cut + 1]
            at = cut + 1
        buf = buf[at:]
    if buf:
        yield buf


def body_windows(chunks: Iterable[str], words: Sequence[str], options: SearchOptions) -> str:
    """The windows (joined with `` ... ``, cleaned, as :func:`snippet_text` makes them) of a
    text given as successive ``chunks``, reading chunks only until the snippet's length is
    reached: the rest of a long page is never decoded nor searched. "" when no query word is
    in the text."""
    pattern = highlight_pattern(words)
    if pattern is None:
        return ""
    pieces = _Pieces(pattern, options.description_length, words)
    pieces.add_windows(parts_of(chunks), options.snippet_left, options.snippet_right)
    return pieces.text()


def snippet_text(text: str, words: Sequence[str], options: SearchOptions,
                 excerpt: str = "") -> str:
    """The plain (unescaped) snippet of ``text`` for the query words; ``excerpt`` (windows
    of the page's body, :func:`body_windows`) stands in when ``text`` holds no query word."""
    limit = options.description_length
    text = text or ""
    pattern = highlight_pattern(words)
    if pattern is None:
        return _start(text, limit, None)
    if excerpt and not pattern.search(text):
        text = excerpt
    # joined group descriptions are split back; an ellipsis never splits sources
    sources = [s.strip() for s in text.split(" .. ") if s.strip()]
    pieces = _Pieces(pattern, limit, words)
    for source in sources:
        if not pieces.may_match(source):
            continue
        if len(source) < MIN_SNIPPET_LENGTH:
            pieces.add(clean(source, pattern))
        else:
            pieces.add_windows(parts_of((source,)), options.snippet_left,
                               options.snippet_right)
        if pieces.full:
            break
    if not pieces.pieces:
        return _start(text, limit, pattern)
    return pieces.text()


def _start(text: str, limit: int, pattern: re.Pattern[str] | None) -> str:
    return _trim_to_space(clean(text[:limit * 3], pattern), limit)


def snippet(text: str, words: Sequence[str], options: SearchOptions,
            robot_metas: Iterable[str] = (), excerpt: str = "") -> str:
    """The highlighted, escaped snippet HTML ("" under NOSNIPPET)."""
    if any(m.upper() in ("NOSNIPPET", "NONE") for m in robot_metas):
        return ""
    return highlight(snippet_text(text, words, options, excerpt), highlight_pattern(words))


def title_text(title: str, description: str, url: str) -> str:
    title = _SPACE.sub(" ", title or "").strip()
    if title:
        return title
    description = clean((description or "")[:200])
    if description:
        return description[:TITLE_FALLBACK_CHARS].rstrip() + ELLIPSIS
    return url


def title_html(title: str, description: str, url: str, words: Sequence[str]) -> str:
    return highlight(title_text(title, description, url), highlight_pattern(words))
