"""The stored copy of a page, made safe to show and with the query terms highlighted.

Layer: glue of the ``ranking`` app (no Django imports). The cached page view
(:mod:`ranking.views`) shows a banner and an ``<iframe sandbox>`` whose document comes from
:func:`frame_document`; that response also carries a Content-Security-Policy with ``sandbox``
and ``default-src 'none'`` (see :data:`FRAME_CSP`), so even opened on its own the stored page can
run no script, load nothing, submit nothing, and is a unique opaque origin, never ours.

The stored bytes are decoded (the charset of a ``<meta>`` in the first 1024 bytes, else UTF-8
with replacement) and re-served as UTF-8 with:

* ``<meta charset="utf-8">``, ``<meta name="robots" content="noindex,nofollow">`` and
  ``<base href="<original url>" target="_blank">`` inserted first, so relative links point at
  the original site and open outside the frame;
* ``<meta http-equiv="refresh">`` removed (it would navigate the frame away);
* the query's words wrapped in ``<mark>`` in the text (never inside tags, ``<script>``,
  ``<style>``, ``<textarea>`` or ``<title>``).

Documents that are not HTML are shown as escaped text in a ``<pre>``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from ranking.core.snippets import highlight_pattern

FRAME_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
             "form-action 'none'; base-uri http: https:; frame-ancestors 'self'; "
             "sandbox allow-popups allow-popups-to-escape-sandbox")
FRAME_SANDBOX = "allow-popups allow-popups-to-escape-sandbox"
MARK_STYLE = "background:#ffeb3b;color:#000"
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_REFRESH = re.compile(r"""<meta[^>]*http-equiv\s*=\s*["']?refresh[^>]*>""", re.IGNORECASE)
_TOKENS = re.compile(r"(<!--.*?-->|<[^>]*>)", re.DOTALL)
_RAW_TEXT = ("script", "style", "textarea", "title", "noscript", "xmp", "iframe", "noembed")
_TAG_NAME = re.compile(r"^<\s*(/?)\s*([a-zA-Z][a-zA-Z0-9-]*)")
_HEAD = re.compile(r"<head(\s[^>]*)?>", re.IGNORECASE)


def decode(data: bytes) -> str:
    found = _CHARSET.search(data[:1024])
    if found:
        try:
            return data.decode(found.group(1).decode("ascii"), "replace")
        except LookupError:
            pass
    return data.decode("utf-8", "replace")


def is_html(mime_type: str, data: bytes) -> bool:
    if mime_type:
        return "html" in mime_type.lower() or "xml" in mime_type.lower()
    return bool(re.search(rb"<(html|head|body|p|div|title)[\s>]", data[:2048], re.IGNORECASE))


def highlight_html(text: str, words: Iterable[str]) -> str:
    """Wrap the query words of the text parts of ``text`` (HTML) in ``<mark>``."""
    pattern = highlight_pattern(words)
    if pattern is None:
        return text
    out: list[str] = []
    raw_until: str | None = None
    for piece in _TOKENS.split(text):
        if not piece:
            continue
        if piece.startswith("<"):
            m = _TAG_NAME.match(piece)
            if m:
                closing, name = m.group(1) == "/", m.group(2).lower()
                if raw_until is None and not closing and name in _RAW_TEXT:
                    raw_until = name
                elif raw_until == name and closing:
                    raw_until = None
            out.append(piece)
        elif raw_until is not None:
            out.append(piece)
        else:
            out.append(pattern.sub(
                lambda m: f'<mark style="{MARK_STYLE}">{m.group(0)}</mark>', piece))
    return "".join(out)


def frame_document(data: bytes, url: str, mime_type: str, words: Iterable[str]) -> str:
    """The document served inside the sandboxed frame."""
    head = ('<meta charset="utf-8"><meta name="robots" content="noindex,nofollow">'
            f'<base href="{html.escape(url, quote=True)}" target="_blank">')
    if not is_html(mime_type, data):
        text = html.escape(decode(data))
        pattern = highlight_pattern(words)
        if pattern is not None:
            text = pattern.sub(lambda m: f'<mark style="{MARK_STYLE}">{m.group(0)}</mark>', text)
        return (f"<!doctype html><html><head>{head}</head><body>"
                f'<pre style="white-space:pre-wrap">{text}</pre></body></html>')
    text = _REFRESH.sub("", decode(data))
    text = highlight_html(text, words)
    found = _HEAD.search(text)
    if found:
        return text[:found.end()] + head + text[found.end():]
    return head + text
