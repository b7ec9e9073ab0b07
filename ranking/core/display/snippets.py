"""Snippets and highlighted titles of results (the Yioop design document's snippets).

Layer: ``ranking.core``. The pipeline calls :func:`snippet` and :func:`title_html` for the final
top results only, on their stored summaries; a local shard calls :func:`stored_body_windows`
on the stored body of a page whose description holds no query word
(:meth:`ranking.core.shard.local.LocalShard.snippet_summaries`).

* The text is the summary description; for a group, the descriptions of the page and its link
  records joined with `` .. `` (the caller joins them). When no query word is in it, the
  ``excerpt`` (windows of the page's whole indexed text, the summary's ``body``, made by the
  shard) is shown instead: with whole-page indexing a page matches on words past its
  2,000-character description, and its snippet must still show one.
* Each source (a piece between `` .. ``) shorter than ``MIN_SNIPPET_LENGTH`` is taken whole when it
  holds a query word; otherwise every window of up to ``snippet_left`` characters before a match,
  the match, and up to ``snippet_right`` characters after, cut at word boundaries. Windows that
  overlap are merged into one (of a snippet's length at most); each is cleaned of markup debris
  (:mod:`ranking.core.display.debris`: pilcrows, navigation labels, breadcrumbs, a phrase repeated
  twice) and kept only when it still holds a query word and is not already shown (the same
  text, or inside a window already taken, compared case-insensitively). Windows are joined
  with `` ... `` up to ``description_length`` characters, trimmed back to a space. With no
  match at all, the cleaned start of the text. A body's windows too few to fill the snippet
  (its words far apart) are widened instead (:func:`stored_body_windows`).
* Matching never runs past what is needed, and its work is bounded by the snippet, not the
  page: matches are found from candidates (:class:`QueryWords`: literal scans of the
  lower-cased bytes for the words' starts, then the case-insensitive pattern from there),
  debris is cleaned from the few hundred characters around them (a stretch), the search stops
  once the snippet's length is reached, and a body is inflated only up to its first window
  and a few kB after it, and decoded only around its words.
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
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ranking.core.display.debris import clean, collapse_repeats
from ranking.core.display.summary import StoredSummary, word_pattern
from ranking.core.display.summary import first_word as _first_word
from ranking.core.options import SearchOptions

MIN_SNIPPET_LENGTH = 100
TITLE_FALLBACK_CHARS = 20
ELLIPSIS = "\u2026"
JOIN = " ... "
PART = 800  # characters cleaned and searched at a time (a long text is read part by part)
MARGIN = 60  # characters around a window's context taken into a stretch (debris at its edges)
BODY_MARGIN = 96  # bytes around a window's context taken into a stretch of a stored body
BODY_AFTER_FIRST = 4096  # body bytes read on after the first window to fill a snippet
# characters a case-insensitive pattern matches to an ASCII letter (see summary.FOLDS)
FOLD_CHARS = "\u0130\u0131\u017f\u212a"
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class QueryWords:
    """What every result of one query highlights: the query words (lower-cased, word
    characters only, longest first), their case-insensitive ``pattern`` (a word at a word
    boundary, running on for up to 3 word characters), and, when every word is ASCII, the
    words as ``ascii`` bytes for the plain substring searches that find candidate places.
    Those searches look for ``scan``: the needles without any that begins with another
    (``strings`` with ``string``) and with a common prefix of four characters or more standing
    for the needles that start with it (``query``, ``queri``: ``quer``), so a word and its
    stem cost one search, and every match begins with a scan word; ``runs`` (the longest
    needle that begins with each scan word, plus the 3 characters a match may run on) bound
    the words a scan word is looked for in."""

    needles: tuple[str, ...]
    pattern: re.Pattern[str]
    ascii: tuple[bytes, ...] | None
    scan: tuple[str, ...]  # the fewest words whose occurrences cover every needle's
    runs: tuple[int, ...]  # for each scan word, the longest word a match of it can be
    raw: tuple[re.Pattern[bytes], ...]  # the ASCII scan words in raw stored text (word_pattern)
    reach: int  # bytes a match of ``raw`` spans with what it looks at around


def query_words(words: Iterable[str]) -> QueryWords | None:
    """The :class:`QueryWords` of ``words`` (None when none is a word), built once per set of
    words (every result of a query, and every query repeated, shares it)."""
    return _query_words(tuple(words))


@functools.lru_cache(maxsize=256)
def _query_words(words: tuple[str, ...]) -> QueryWords | None:
    alts = _words(words)
    if not alts:
        return None
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, alts)) + r")\w{0,3}(?!\w)",
                         re.IGNORECASE)
    scan = _scan_words(alts)
    ascii_words = tuple(w.encode() for w in scan) if all(w.isascii() for w in alts) else None
    runs = tuple(max(len(w) for w in alts if w.startswith(word)) + 3 for word in scan)
    raw = tuple(map(word_pattern, ascii_words, runs)) if ascii_words is not None else ()
    return QueryWords(alts, pattern, ascii_words, scan, runs, raw, max(runs) + 8)


def _scan_words(words: Iterable[str]) -> tuple[str, ...]:
    """``words`` reduced for substring searches (see :class:`QueryWords`)."""
    kept: list[str] = []
    for word in sorted(set(words), key=len):
        if not any(word.startswith(other) for other in kept):
            kept.append(word)
    merged = True
    while merged:
        merged = False
        for i, a in enumerate(kept):
            for b in kept[i + 1:]:
                prefix = os.path.commonprefix([a, b])
                if len(prefix) >= 4:
                    kept = [w for w in kept if not w.startswith(prefix)] + [prefix]
                    merged = True
                    break
            if merged:
                break
    return tuple(sorted(kept, key=lambda w: (-len(w), w)))


def highlight_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """A case-insensitive pattern for query words and stems (each may run on 3 characters).
    Built once per set of words (every result of a query highlights the same words)."""
    query = query_words(words)
    return query.pattern if query is not None else None


def _words(words: Iterable[str]) -> tuple[str, ...]:
    """The query words a pattern matches: lower-cased, word characters only, longest first."""
    kept = {w.lower() for w in words if w and not w.startswith("_") and _WORD.fullmatch(w)}
    return tuple(sorted(kept, key=lambda w: (-len(w), w)))


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


class _Finder:
    """The matches of a query's pattern in one text, found from candidates: the first word
    at or after a position that begins with a scan word in the lower-cased UTF-8 bytes of
    the text (:func:`ranking.core.display.summary.word_pattern`: a literal scan, many times faster
    than the case-insensitive pattern, and a bytes ``lower()`` is a table lookup where a str's
    looks every character up), then the pattern from there. Without ASCII words, or in a text
    holding a character that folds to an ASCII letter, the pattern alone."""

    __slots__ = ("text", "query", "low", "encoded")

    def __init__(self, text: str, query: QueryWords) -> None:
        self.text = text
        self.query = query
        self.low: bytes | None = None
        self.encoded: bytes | None = None
        if query.ascii is None or any(ch in text for ch in FOLD_CHARS):
            return
        self.encoded = text.encode()
        self.low = self.encoded.lower()  # lower() of bytes is a table lookup, of str is not

    def match(self, pos: int = 0) -> re.Match[str] | None:
        """The first match at or after character ``pos``: the pattern searched from the
        first word that begins with a scan word (every match begins with one)."""
        pattern = self.query.pattern
        if self.low is None or self.encoded is None:
            return pattern.search(self.text, pos)
        ascii_text = len(self.encoded) == len(self.text)
        start = pos if ascii_text or not pos else len(self.text[:pos].encode())
        at = _first_word(self.low, self.query.raw, start, len(self.low), self.query.reach)
        if at == -1:
            return None
        if not ascii_text:  # a scan word starts with an ASCII byte: a character's first byte
            at = len(self.encoded[:at].decode())
        return pattern.search(self.text, at)


def has_match(text: str, query: QueryWords) -> bool:
    """Whether ``text`` holds a match of the query's pattern."""
    return _Finder(text, query).match() is not None


class _Pieces:
    """The snippet's pieces so far: each holding a query word, none repeated."""

    __slots__ = ("query", "pattern", "pieces", "folded", "length", "limit")

    def __init__(self, query: QueryWords, limit: int) -> None:
        self.query = query
        self.pattern = query.pattern
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
        text), each part cleaned of debris first; stops reading ``parts`` once full. A window
        does not cross from one part into the next."""
        for part in parts:
            part = clean(part, self.pattern)
            for start, end in _spans(part, self.pattern, left, right, self.limit):
                self.add(part[start:end])
                if self.full:
                    return

    def may_match(self, text: str) -> bool:
        """Whether ``text`` may hold a match: a query word in its lower case, found by plain
        substring search (many times faster than the pattern, whose boundaries and case
        folding are then checked on the few texts that pass)."""
        low = text.lower()
        return any(n in low for n in self.query.needles) and \
            self.pattern.search(text) is not None

    def text(self) -> str:
        return _trim_to_space(JOIN.join(self.pieces), self.limit)


def _spans(source: str, pattern: re.Pattern[str], left: int, right: int,
           longest: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of the windows around the matches of ``pattern`` in ``source``, lazily,
    cut at spaces; overlapping windows come out merged, up to ``longest`` characters (a
    window that long is given, and the next starts where it ends: text dense with matches
    never makes one window of the whole source)."""
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
            if longest is None or end - current[0] <= longest:
                current[1] = max(current[1], end)
                continue
            start = current[1]
        if current is not None:
            yield current[0], current[1]
        current = [start, end]
    if current is not None:
        yield current[0], current[1]


def _stretches(text: str, query: QueryWords, before: int, length: int) -> Iterator[str]:
    """The stretches of ``text`` around its matches, lazily: each from a space ``before``
    characters or more before a match to a space ``length`` characters or more after that,
    the next from the first match after it. The windows of a stretch are then cut from it
    cleaned: debris is removed from a few hundred characters around the words, never from a
    whole text, and the text past the snippet's length is never searched."""
    finder = _Finder(text, query)
    m = finder.match()
    while m is not None:
        start = max(0, m.start() - before)
        if start > 0:
            space = text.rfind(" ", max(0, start - MARGIN), start)
            start = space + 1 if space != -1 else start
        end = max(m.end(), start + length)
        if end < len(text):
            space = text.find(" ", end, end + MARGIN)
            end = space if space != -1 else end
        yield text[start:end]
        m = finder.match(end)


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
    query = query_words(words)
    if query is None:
        return ""
    pieces = _Pieces(query, options.description_length)
    parts = (part for part in parts_of(chunks) if pieces.may_match(part))
    pieces.add_windows(parts, options.snippet_left, options.snippet_right)
    return pieces.text()


def stored_body_windows(stored: StoredSummary, words: Sequence[str],
                        options: SearchOptions) -> str:
    """:func:`body_windows` of a stored summary's body. With ASCII query words only the
    stretches of the body around their occurrences are decoded and searched
    (:meth:`~ranking.core.display.summary.StoredSummary.body_stretches`, a plain search of the
    lower-cased inflated bytes; the rest is never decoded), and once a window is found the
    body is read on for at most ``BODY_AFTER_FIRST`` more bytes to fill the snippet: a long
    page is not inflated to its end for a second window. When the windows found do not fill
    the snippet, they are taken again with more text after each word (up to the snippet's
    length), so the excerpt is a snippet's length whenever the page text around its words
    is. With other words, the body's chunks part by part."""
    query = query_words(words)
    if query is None:
        return ""
    limit = options.description_length
    pieces = _Pieces(query, limit)
    left, right = options.snippet_left, options.snippet_right
    if query.ascii is None:
        pieces.add_windows((part for part in parts_of(stored.body_chunks())
                            if pieces.may_match(part)), left, right)
        return pieces.text()
    wide_right = max(right, limit - left)
    taken: list[str] = []
    for part in stored.body_stretches(query.raw, 2 * left + BODY_MARGIN,
                                      wide_right + BODY_MARGIN,
                                      longest=2 * limit + 2 * BODY_MARGIN,
                                      reach=query.reach):
        taken.append(part)
        found = bool(pieces.pieces)
        pieces.add_windows((part,), left, right)
        if pieces.full:
            return pieces.text()
        if pieces.pieces and not found:
            stored.scan_on(BODY_AFTER_FIRST)
    if pieces.pieces:  # too few windows to fill the snippet: widen them
        wide = _Pieces(query, limit)
        wide.add_windows(taken, left, wide_right)
        if wide.length > pieces.length:
            return wide.text()
    return pieces.text()


def snippet_text(text: str, words: Sequence[str], options: SearchOptions,
                 excerpt: str = "") -> str:
    """The plain (unescaped) snippet of ``text`` for the query words; ``excerpt`` (the
    windows of the page's body, :func:`stored_body_windows`, cleaned and cut to the snippet's
    length already) stands in, as it is, when ``text`` holds no query word."""
    limit = options.description_length
    text = text or ""
    query = query_words(words)
    if query is None:
        return _start(text, limit, None)
    if excerpt and not has_match(text, query):
        return excerpt  # already the snippet's windows (stored_body_windows)
    # joined group descriptions are split back; an ellipsis never splits sources
    sources = [s.strip() for s in text.split(" .. ") if s.strip()]
    pieces = _Pieces(query, limit)
    left, right = options.snippet_left, options.snippet_right
    for source in sources:
        if len(source) < MIN_SNIPPET_LENGTH:
            if has_match(source, query):
                pieces.add(clean(source, query.pattern))
        else:
            pieces.add_windows(_stretches(source, query, left + MARGIN, limit + 2 * MARGIN),
                               left, right)
        if pieces.full:
            break
    if not pieces.pieces:
        return _start(text, limit, query.pattern)
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
