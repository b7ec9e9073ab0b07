"""Reading a stored page summary without its whole text.

Layer: ``ranking.core`` (pure Python). A page's summary is stored as one gzip member of compact
JSON (``indexer.core.documents.encoding``, written with ``ensure_ascii=False``). With whole-page indexing it
carries, besides the 2,000-character description, the page's whole indexed text under
``"body"``, written after every other key but the outlinks (``"links"``, a list of ``[url,
text]`` pairs), which come last (``crawler.core.processing.indexing.page_summary``):
``{"url":…,"title":…,"description":…,…,"body":"…","links":[…]}``. Indexes written before
had the links before a few other keys and the body last (``…,"links":[…],…,"body":"…"}``);
both orders are read. The search shows ten results and needs of each only the keys before the
body and links (url, title, description, robot metas, keywords); only a result whose
description holds no query word needs the body, and then only around its first few query
words. So:

* :meth:`StoredSummary.of` inflates the member only until the top-level ``,"body":`` key (or,
  with ``until_links``, the top-level ``,"links":`` key, whichever comes first) and parses the
  JSON before it: a summary read costs what it cost before whole-page indexing, and a search
  parses neither the body nor the outlinks. A top-level key is told from a key of the same name
  nested in the summary (a scraper's field) by parsing: the text before it, closed with ``}``,
  is a JSON object only at the top level. A summary with neither (a link document) is inflated
  and parsed whole, as before.
* :meth:`StoredSummary.body_chunks` then goes on inflating lazily (in an older index, past the
  links when the read stopped there) and yields the body's text chunk by chunk (JSON escapes
  decoded, never split in the middle of one or of a UTF-8 character), up to the body's end:
  the first ``","links":[`` (a JSON string's own quotes are escaped, so the sequence cannot be
  inside it) or the member's closing ``"}``. The caller stops iterating when it has its
  windows, and the rest of the member is never inflated.
* :meth:`StoredSummary.body_stretches` yields only the stretches of the body around the places
  where one of a few lower-case ASCII words occurs, found in the raw inflated bytes (lowered
  ASCII bytes, ``bytes.find``: no decoding and no regex over text that holds no query word).

Bad data raises :class:`ValueError` or one of :data:`INFLATE_ERRORS`.

Members are inflated with ISA-L (the ``isal`` package's zlib-compatible ``isal_zlib``), which
reads the same gzip format 2 to 2.5 times as fast as zlib: a snippet of a word deep in a large
page (Python's 1.9 MB changelog) inflates the body up to it, and that inflating is most of a
slow query's time. Without the package, zlib.
"""

from __future__ import annotations

import functools
import json
import re
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

try:
    from isal import isal_zlib as _inflate_lib
except ImportError:  # pragma: no cover - isal is a dependency; zlib reads the same members
    _inflate_lib = zlib  # type: ignore[no-redef]
INFLATE_ERRORS: tuple[type[Exception], ...] = tuple({zlib.error, _inflate_lib.error})

BODY_KEY = b',"body":"'
LINKS_KEY = b',"links":['
BODY_END = b'","links":['  # the body's closing quote and the key after it
HEAD_STEP = 3072  # bytes inflated first for a summary's head (doubling): url, title, description
STEP = 8192  # bytes inflated at a time for body chunks
SCAN_STEP = 16384  # bytes inflated at a time when scanning a body for words
FEED_FIRST = 1024  # compressed bytes first given to the decompressor (doubling)
FEED_MOST = 32768  # compressed bytes given to the decompressor at a time at most
SLACK = 64  # bytes looked through for a space to cut a stretch at
MAX_STRETCH = 2048  # bytes of one stretch at most by default (one dense with words stops growing)
# Non-ASCII characters that a case-insensitive pattern matches to an ASCII letter (dotted and
# dotless i, long s, the Kelvin sign), in UTF-8 (summaries are written with ensure_ascii=False:
# no \\u escapes but of control characters): a lower-cased byte search for an ASCII word would
# miss them, so a stretch is made around each.
FOLDS = (b"\xc4\xb0", b"\xc4\xb1", b"\xc5\xbf", b"\xe2\x84\xaa")


def _object(data: bytes) -> dict[str, Any] | None:
    """``data`` parsed when it is a JSON object, else None."""
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class _Inflater:
    """A gzip member inflated a requested number of bytes at a time, its compressed bytes
    given to the decompressor a little at a time too (FEED_FIRST, then doubling up to
    FEED_MOST). ISA-L decodes all the input it is given, whatever the output asked for:
    given a whole member to read a 3 KB head, it inflates 100 KB (three times zlib's time for
    the head); fed a little at a time it inflates about what is read."""

    __slots__ = ("_decompressor", "_member", "_fed", "_feed")

    def __init__(self, lib: Any, member: bytes) -> None:
        self._decompressor = lib.decompressobj(31)
        self._member = member
        self._fed = 0  # member bytes given to the decompressor
        self._feed = FEED_FIRST

    @property
    def unread(self) -> int:
        """Compressed bytes of the member not inflated yet (not given to the decompressor, or
        given but not consumed)."""
        return len(self._member) - self._fed + len(self._decompressor.unconsumed_tail)

    def read(self, size: int) -> tuple[bytes, bool]:
        """Up to ``size`` more inflated bytes (fewer only at the member's end) and whether
        the member is at its end."""
        decompressor = self._decompressor
        out = b""
        while len(out) < size:
            tail = decompressor.unconsumed_tail
            if not tail:
                if self._fed >= len(self._member):
                    return out + decompressor.flush(), True
                tail = self._member[self._fed:self._fed + self._feed]
                self._fed += len(tail)
                self._feed = min(self._feed * 2, FEED_MOST)
            out += decompressor.decompress(tail, size - len(out))
        return out, False


class StoredSummary:
    """A summary read up to its body (or its links). ``summary`` is the dict of the keys before
    them; ``has_body`` whether the member goes on past them (with a body, or, after a read that
    stopped at the links, perhaps one: :meth:`body_chunks` then yields nothing when there is
    none). The body is read once: by :meth:`body_chunks` or by :meth:`body_stretches`."""

    __slots__ = ("summary", "has_body", "_inflater", "_pending", "_seek", "_step", "_given",
                 "_limit")

    def __init__(self, summary: dict[str, Any], has_body: bool, inflater: Any,
                 pending: bytes, seek: bool = False) -> None:
        self.summary = summary
        self.has_body = has_body
        self._inflater = inflater
        # inflated bytes not yet given: the body's (or, with ``seek``, from the links key on)
        self._pending = pending
        self._seek = seek
        self._step = HEAD_STEP
        self._given = 0  # body bytes up to the end of the last stretch given
        self._limit: int | None = None  # body bytes past which no stretch is looked for

    @staticmethod
    def of(member: bytes, until_links: bool = False) -> StoredSummary:
        """The summary of gzip ``member`` inflated and parsed up to its top-level body key or,
        with ``until_links``, up to its top-level links key when that comes first (an older
        index); a summary with neither whole. The first step inflates ``HEAD_STEP`` bytes,
        which hold a page's head and its body key as a page summary is written. ISA-L
        decodes all the input it is given: should it fail on a member's head where zlib does
        not, the head is read again with zlib, and damage past the head shows only if the
        body is read."""
        try:
            return StoredSummary._of(member, until_links, _inflate_lib)
        except INFLATE_ERRORS:
            if _inflate_lib is zlib:
                raise
            return StoredSummary._of(member, until_links, zlib)

    @staticmethod
    def _of(member: bytes, until_links: bool, lib: Any) -> StoredSummary:
        inflater = _Inflater(lib, member)
        first, final = inflater.read(HEAD_STEP)
        at = first.find(BODY_KEY)
        if at != -1 and (not until_links or first.find(LINKS_KEY, 0, at) == -1):
            head = _object(first[:at] + b"}")  # the common case: the body key in the head
            if head is not None:
                return StoredSummary(head, True, inflater, first[at + len(BODY_KEY):])
        out = bytearray(first)
        step = HEAD_STEP * 2
        looked = 0  # where the search for the keys resumes
        keys = (BODY_KEY, LINKS_KEY) if until_links else (BODY_KEY,)
        while True:
            if looked:  # the first pass looks through the head already read
                more, final = inflater.read(step)
                out += more
                step *= 2
            for at, key in sorted((at, key) for key in keys
                                  if (at := out.find(key, looked)) != -1):
                while at != -1:
                    head = _object(bytes(out[:at]) + b"}")
                    if head is not None:
                        pending = bytes(out[at + len(BODY_KEY):]) if key is BODY_KEY \
                            else bytes(out[at:])
                        stored = StoredSummary(head, True, inflater, pending,
                                               seek=key is LINKS_KEY)
                        stored._step = step
                        return stored
                    at = out.find(key, at + 1)  # a nested key (the object is not closed there)
            if final:
                break
            looked = max(1, len(out) - len(LINKS_KEY))
        data = json.loads(bytes(out))
        if not isinstance(data, dict):
            raise ValueError("a stored summary is not a JSON object")
        return StoredSummary(data, False, None, b"")

    def _inflate(self, size: int) -> tuple[bytes, bool]:
        """Up to ``size`` more inflated bytes and whether the member is at its end."""
        return self._inflater.read(size)

    def _to_body(self) -> bool:
        """After a read that stopped at the links: inflate on to the top-level body key (the
        first ``,"body":"`` right after an array, the links, or else the first one after
        them whose preceding keys form an object) and leave ``_pending`` at the body's text.
        A ``],"body":"`` can only be the key after an array value: no nested object of a
        summary holds arrays (a scraper's fields are scalars). False when there is no body."""
        if not self._seek:
            return self.has_body
        buf = bytearray(self._pending)  # starts with ',"links":['
        looked = 0
        done = False
        while True:
            at = buf.find(BODY_KEY, looked)
            while at != -1:
                if buf[at - 1] == 0x5D or _object(b"{" + bytes(buf[1:at]) + b"}") is not None:
                    self._pending = bytes(buf[at + len(BODY_KEY):])
                    self._seek = False
                    return True
                at = buf.find(BODY_KEY, at + 1)
            if done:
                self._pending, self._seek, self.has_body = b"", False, False
                return False
            looked = max(1, len(buf) - len(BODY_KEY))
            more, done = self._inflate(self._step)
            self._step = min(self._step * 2, SCAN_STEP)
            buf += more

    def _raw_body(self, size: int, most: int = 0) -> Iterator[bytes]:
        """The body's raw JSON string bytes (without the closing quote), inflated as iterated,
        in chunks of about ``size`` bytes or more (doubling up to ``most`` when it is larger),
        each cut where it can be decoded alone (never inside an escape sequence or a UTF-8
        character). The body ends at the first ``","links":[`` (the links follow it), or else
        at the member's closing ``"}`` (an index written when the body was the last key);
        nothing after the body's end is inflated."""
        if not self._to_body():
            return
        raw = self._pending
        self._pending = b""
        seen = len(raw)  # body bytes inflated so far
        tail = b""  # inflated bytes not yet given
        done = False
        while True:
            limited = False  # stopped by :meth:`scan_on`
            while not done and len(raw) < size:
                want = size - len(raw)
                if self._limit is not None:
                    want = min(want, self._limit - seen)
                    if want <= 0:
                        limited = True
                        break
                more, done = self._inflate(want)
                raw += more
                seen += len(more)
            buf = tail + raw
            raw = b""
            end = buf.find(BODY_END, max(0, len(tail) - len(BODY_END)))
            if end != -1:
                buf, tail, done = buf[:end], b"", True
            elif done:
                if not buf.endswith(b'"}'):
                    raise ValueError("a stored summary's body has no end")
                buf, tail = buf[:-2], b""
            else:  # the end may be what is at the end: keep as many bytes as it has
                keep = _cut(buf, len(buf) - len(BODY_END) + 1)
                buf, tail = buf[:keep], buf[keep:]
            if buf:
                yield buf
            if done or limited:
                return
            size = min(size * 2, most) if most > size else size

    def body_chunks(self, size: int = STEP) -> Iterator[str]:
        """The body's text, in chunks of about ``size`` bytes, inflated as iterated."""
        for raw in self._raw_body(size):
            yield _decode(raw)

    def body_stretches(self, words: Sequence[re.Pattern[bytes]], before: int, after: int,
                       longest: int = MAX_STRETCH, size: int = STEP,
                       reach: int = 64) -> Iterator[str]:
        """The body's text around each match of one of ``words`` (patterns over its
        lower-cased raw bytes, as :func:`word_pattern` makes them, none matching more than
        ``reach`` bytes with what it looks at around), in order, inflated as iterated: from a
        space ``before`` bytes or more before the match to a space ``after`` bytes or more
        after it (or, with no space near, the nearest place that can be decoded). Matches
        whose stretches would overlap make one stretch, of up to about ``longest`` bytes.
        Where the raw bytes hold a character that folds to an ASCII letter (:data:`FOLDS`), a
        stretch is made around it too, so that the caller's case-insensitive pattern sees it.
        The matches are candidates: the caller checks each stretch. After :meth:`scan_on` the
        scan stops that many bytes past the last stretch given."""
        if not words:
            return
        reach = max(reach, *map(len, FOLDS))
        buf = b""  # raw bytes from the start of the current stretch (or the scan) on
        base = 0  # the body offset of buf[0]
        scan = 0  # where in ``buf`` the search resumes
        start = end = -1  # the current stretch (end: its last match's start + after)
        chunks = self._raw_body(size, SCAN_STEP)
        self._given = 0
        done = False
        while not done:
            chunk = next(chunks, None)
            done = chunk is None
            if chunk is not None:
                buf += chunk
            low = buf.lower()
            marks = tuple(words) + tuple(map(_literal, _folds_in(low)))
            while True:
                if start == -1:
                    hit = first_word(low, marks, scan, len(low), reach)
                    if hit == -1:
                        scan = max(scan, len(low) - reach)  # a word may run into what follows
                        break
                    start = _start_cut(buf, hit - before)
                    end = hit + after
                    scan = hit + 1
                    continue
                # grow the stretch while the next word's stretch would overlap it
                horizon = min(end + before, start + longest)
                if max(horizon + reach, end + SLACK) > len(buf) and not done:
                    break  # more bytes are needed to know
                hit = first_word(low, marks, scan, min(horizon + reach, len(low)), reach)
                if hit != -1 and hit <= horizon and end < start + longest:
                    end = max(end, hit + after)
                    scan = hit + 1
                    continue
                stop = _end_cut(buf, min(end, len(buf)))
                self._given = base + stop
                yield _decode(buf[start:stop])
                scan = max(scan, stop)
                start = end = -1
            # keep only what a stretch may still need
            keep = start if start != -1 else max(0, min(scan, len(buf) - reach) - before - SLACK)
            keep = _cut(buf, keep)
            buf = buf[keep:]
            base += keep
            scan -= keep
            if start != -1:
                start -= keep
                end -= keep

    def scan_on(self, size: int) -> None:
        """Let :meth:`body_stretches` inflate at most ``size`` more bytes of the body past the
        end of the last stretch it gave (then it gives the stretches of what it has and
        stops)."""
        self._limit = self._given + size


@functools.lru_cache(maxsize=len(FOLDS))
def _literal(data: bytes) -> re.Pattern[bytes]:
    return re.compile(re.escape(data))


def _folds_in(low: bytes) -> tuple[bytes, ...]:
    """The :data:`FOLDS` that ``low`` holds (quick tests first, most text having none: ASCII,
    then single bytes of theirs, each a ``memchr``)."""
    if low.isascii() or (b"\xc4" not in low and b"\xc5" not in low and b"\x84" not in low):
        return ()
    return tuple(fold for fold in FOLDS if fold in low)


def word_pattern(needle: bytes, longest: int) -> re.Pattern[bytes]:
    r"""The pattern, over lower-cased raw JSON string bytes, of a word that begins with
    ``needle`` (lower-case ASCII) and is at most ``longest`` bytes long: ``needle`` at a word
    start, where the byte before is not an ASCII word byte or is the letter of an escape
    (``\n``, ``\u00e9``: the escape is not the text's). It begins with the needle, so ``re``
    scans for it as a literal (about as fast as ``bytes.find``, and exact at word starts where
    a find would stop at every ``os`` of ``host``). A word that runs on in a non-ASCII
    letter is shorter here than to the caller's pattern, and a backslash escaped by another
    one is taken for an escape: candidates more, never one less."""
    word = re.escape(needle)
    run = str(max(1, longest - len(needle) + 1)).encode()
    return re.compile(word + rb"(?:(?<![a-z0-9_]" + word + rb")|(?<=\\[a-z/\\\"]" + word
                      + rb")|(?<=\\u[0-9a-f]{4}" + word + rb"))(?![a-z0-9_]{" + run + rb"})")


def first_word(low: bytes, words: Sequence[re.Pattern[bytes]], start: int, stop: int,
                reach: int) -> int:
    """The first offset in ``low[start:stop]`` where one of ``words`` (matching ``reach``
    bytes at most) matches, or -1: each search bounded by the best match so far."""
    best = -1
    for word in words:
        found = word.search(low, start, stop if best == -1 else min(stop, best + reach))
        if found is not None and found.start() < stop and (best == -1 or found.start() < best):
            best = found.start()
    return best


def _start_cut(buf: bytes, at: int) -> int:
    """A place at or before ``at`` to start a stretch: after a space, or decodable."""
    if at <= 0:
        return 0
    space = buf.rfind(b" ", max(0, at - SLACK), at)
    return space + 1 if space != -1 else _cut(buf, at)


def _end_cut(buf: bytes, at: int) -> int:
    """A place at or after ``at`` to end a stretch: before a space, or decodable."""
    if at >= len(buf):
        return len(buf)
    space = buf.find(b" ", at, at + SLACK)
    return space if space != -1 else _cut(buf, at)


def _decode(raw: bytes) -> str:
    """The text of raw JSON string bytes that hold whole escapes and characters."""
    text = raw.decode("utf-8")
    return json.loads('"' + text + '"') if "\\" in text else text


def _cut(buf: bytes, at: int) -> int:
    """The largest place at or before ``at`` where ``buf`` (raw JSON string bytes) can be cut
    into two halves that each decode alone: not inside a UTF-8 character nor inside an escape
    sequence (a backslash that ends an odd run of them starts one; ``\\u`` escapes are six
    bytes long)."""
    at = max(0, min(at, len(buf)))
    while 0 < at < len(buf) and 0x80 <= buf[at] < 0xC0:
        at -= 1  # a UTF-8 continuation byte: back to the character's first byte
    back = buf.rfind(b"\\", max(0, at - 6), at)
    if back == -1:
        return at
    run = back
    while run > 0 and buf[run - 1] == 0x5C:
        run -= 1
    if (back - run + 1) % 2 == 0:
        return at  # an even run of backslashes: complete "\\" escapes
    need = 6 if buf[back + 1:back + 2] == b"u" else 2
    return back if back + need > at else at
