"""The stored copy of a page, made safe to show and with the query terms highlighted.

Layer: glue of the ``ranking`` app (no Django imports). The cached page view
(:mod:`ranking.views`) shows a banner and an ``<iframe sandbox>`` whose document comes from
:func:`frame_document`; that response also carries a Content-Security-Policy with ``sandbox``
and ``default-src 'none'`` (see :data:`FRAME_CSP`), so even opened on its own the stored page can
run no script, load nothing, submit nothing, and is a unique opaque origin, never ours.

Only ``http:`` and ``https:`` urls have a cached copy (:func:`is_web_url`); the view refuses
any other, and no link or ``<base>`` is ever made of one.

The stored bytes are decoded (the charset of a ``<meta>`` in the first 1024 bytes, else UTF-8
with replacement) and re-served as UTF-8 in two steps:

1. the query's words are wrapped in ``<mark>`` in text nodes only (never in attributes,
   ``<script>``, ``<style>``, ``<textarea>`` or ``<title>``) by an HTML tokenizer
   (:class:`_FrameWriter`, the standard library's ``html.parser``) that writes every tag anew
   from its parsed name and attributes, each value escaped and quoted, so text inside an
   attribute (``title="a > b <b>word</b>"``) stays inert attribute text;
2. the result is sanitised (:func:`ranking.core.display.sanitize.sanitize_page`: an HTML5
   parser and an allow-list, Ammonia), the last step, so the served body holds no script,
   event handler, script or ``data:text/html`` url, frame, object, form, ``<base>`` or
   ``<meta>`` of the page, even where the tokenizer of step 1 and a browser would read the
   page differently (``<svg><style><img src=x onerror=...>``, ``<noscript>`` tricks). The
   frame's sandbox and CSP are a second line of defence, not the only one.

The document is then ``<!doctype html>``, a head of our own (``<meta charset="utf-8">``,
``<meta name="robots" content="noindex,nofollow">`` and ``<base href="<original url>"
target="_blank">``, so relative links point at the original site and open outside the frame)
and the sanitised body.

Documents that are not HTML are shown as escaped text in a ``<pre>``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from html.parser import HTMLParser
from urllib.parse import urlsplit

from ranking.core.display.sanitize import sanitize_page
from ranking.core.display.snippets import highlight_pattern

FRAME_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
             "form-action 'none'; base-uri http: https:; frame-ancestors 'self'; "
             "sandbox allow-popups allow-popups-to-escape-sandbox")
FRAME_SANDBOX = "allow-popups allow-popups-to-escape-sandbox"
MARK_STYLE = "background-color:#ffeb3b;color:#000"
WEB_SCHEMES = ("http", "https")
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_NO_HIGHLIGHT = frozenset({"script", "style", "textarea", "title", "noscript", "xmp", "iframe",
                           "noembed"})
_TAG_NAME = re.compile(r"[a-z][a-z0-9-]*")
_ATTR_NAME = re.compile(r"[a-zA-Z_:][-a-zA-Z0-9_:.]*")
_CHARREF = re.compile(r"[0-9]{1,7}|[xX][0-9a-fA-F]{1,6}")


def is_web_url(url: str) -> bool:
    """True for an absolute ``http:``/``https:`` url with a host: the only urls linked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in WEB_SCHEMES and bool(parts.netloc)


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


def _marked(text: str, pattern: re.Pattern[str] | None) -> str:
    """``text`` escaped, its matches of ``pattern`` wrapped in ``<mark>``."""
    if pattern is None:
        return html.escape(text, quote=False)
    out, at = [], 0
    for m in pattern.finditer(text):
        out.append(html.escape(text[at:m.start()], quote=False))
        out.append(f'<mark style="{MARK_STYLE}">{html.escape(m.group(0), quote=False)}</mark>')
        at = m.end()
    out.append(html.escape(text[at:], quote=False))
    return "".join(out)


class _FrameWriter(HTMLParser):
    """Re-writes a page from its tokens: tags from their parsed names and attributes, text
    escaped and highlighted outside :data:`_NO_HIGHLIGHT` elements."""

    def __init__(self, pattern: re.Pattern[str] | None) -> None:
        super().__init__(convert_charrefs=False)
        self.pattern = pattern
        self.out: list[str] = []
        self.inert: list[str] = []  # open elements whose text is never highlighted

    def _tag(self, tag: str, attrs: list[tuple[str, str | None]], close: str) -> None:
        if not _TAG_NAME.fullmatch(tag):
            self.out.append(html.escape(self.get_starttag_text() or "", quote=False))
            return
        if tag == "meta" and any(k.lower() == "http-equiv" and (v or "").strip().lower()
                                 == "refresh" for k, v in attrs):
            return
        parts = [f"<{tag}"]
        for name, value in attrs:
            if _ATTR_NAME.fullmatch(name):
                parts.append(f" {name}" if value is None else
                             f' {name}="{html.escape(value, quote=True)}"')
        self.out.append("".join(parts) + close)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, ">")
        if tag in _NO_HIGHLIGHT:
            self.inert.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, "/>")

    def handle_endtag(self, tag: str) -> None:
        if _TAG_NAME.fullmatch(tag):
            self.out.append(f"</{tag}>")
        if tag in self.inert:
            del self.inert[len(self.inert) - 1 - self.inert[::-1].index(tag):]

    def handle_data(self, data: str) -> None:
        if self.cdata_elem is not None:  # script or style: raw text, never parsed as markup
            self.out.append(data)
        else:
            self.out.append(_marked(data, None if self.inert else self.pattern))

    def handle_entityref(self, name: str) -> None:
        self.out.append(f"&{name};" if name.isascii() and name.isalnum() else
                        html.escape(f"&{name}", quote=False))

    def handle_charref(self, name: str) -> None:
        self.out.append(f"&#{name};" if _CHARREF.fullmatch(name) else
                        html.escape(f"&#{name}", quote=False))

    def handle_decl(self, decl: str) -> None:
        if decl.lower().startswith("doctype"):
            self.out.append("<!doctype html>")


def highlight_html(text: str, words: Iterable[str]) -> str:
    """``text`` (HTML) re-written from its tokens (:class:`_FrameWriter`), the query words of
    its text nodes wrapped in ``<mark>``."""
    writer = _FrameWriter(highlight_pattern(words))
    writer.feed(text)
    writer.close()
    return "".join(writer.out)


def frame_document(data: bytes, url: str, mime_type: str, words: Iterable[str]) -> str:
    """The document served inside the sandboxed frame: our head, then the page's text as
    escaped text in a ``<pre>`` (not HTML) or highlighted and sanitised (HTML)."""
    head = '<meta charset="utf-8"><meta name="robots" content="noindex,nofollow">'
    if is_web_url(url):
        head += f'<base href="{html.escape(url, quote=True)}" target="_blank">'
    if not is_html(mime_type, data):
        body = (f'<pre style="white-space:pre-wrap">'
                f"{_marked(decode(data), highlight_pattern(words))}</pre>")
    else:
        body = sanitize_page(highlight_html(decode(data), words))
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"
