"""Character encodings: from the headers, then the page's own declarations, then detection.

Layer: ``crawler.core``. :func:`decode` never fails: whatever the bytes, it returns text (bad
bytes become U+FFFD) and the name of the codec used.

Order: a byte-order mark; the HTTP ``Content-Type`` charset; a ``<meta charset>`` or
``http-equiv=Content-Type`` in the first 4 KB; the XML declaration's ``encoding``; strict UTF-8;
then ``charset-normalizer`` on a sample; finally windows-1252, which decodes any byte.
"""

from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes

_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_\-:.]+)""", re.IGNORECASE
)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([a-zA-Z0-9_\-.]+)""")
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([a-zA-Z0-9_\-:.]+)""", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# What browsers do: these labels mean their superset.
_ALIASES = {
    "iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252",
    "ascii": "cp1252", "iso8859-1": "cp1252", "gb2312": "gb18030", "gbk": "gb18030",
    "x-sjis": "shift_jis", "shift-jis": "shift_jis", "ks_c_5601-1987": "euc-kr",
    "unicode": "utf-16", "utf8": "utf-8", "x-user-defined": "cp1252",
}
DETECTION_SAMPLE = 65536


def charset_from_content_type(content_type: str) -> str | None:
    """The ``charset=`` parameter of a Content-Type value."""
    match = _HEADER_CHARSET.search(content_type or "")
    return match.group(1) if match else None


def declared_charset(body: bytes) -> str | None:
    """A charset the document declares in its first 4 KB (meta tag or XML declaration)."""
    head = body[:4096]
    match = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    return match.group(1).decode("ascii", "replace") if match else None


def codec_name(label: str | None) -> str | None:
    """The Python codec for an encoding label, or ``None`` when Python has none."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
        # a text encoding Python can decode with: not "undefined" (which always raises) nor a
        # bytes-to-bytes or str-to-str codec such as base64 or rot13
        b"a".decode(name, "replace")
    except (LookupError, ValueError, UnicodeError):
        return None
    return name


def decode(body: bytes, content_type: str = "") -> tuple[str, str]:
    """``(text, codec)`` for a page body; never raises."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return body.decode(name, "replace"), name
    for label in (charset_from_content_type(content_type), declared_charset(body)):
        name = codec_name(label)
        if name is not None and name not in ("utf-16", "utf-32", "utf-16-le", "utf-16-be"):
            return body.decode(name, "replace"), name
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        # A page cut by the byte range may end inside a character: accept that.
        if exc.start >= len(body) - 3 and exc.reason == "unexpected end of data":
            return body.decode("utf-8", "replace"), "utf-8"
    guess = from_bytes(body[:DETECTION_SAMPLE]).best()
    name = codec_name(guess.encoding) if guess is not None else None
    if name is None:
        name = "cp1252"
    return body.decode(name, "replace"), name
