"""The image processor: images are indexed through their alt text and the links to them.

Layer: ``crawler.core.processing.processors``. An image has no text of its own: its document gets a
title from the file name and ``media:image`` (``image-small``/``-medium``/``-large`` when the size
can be read from a PNG, GIF or JPEG header); the words come from the link documents that pages
make for their ``<img alt>`` links. SVG is XML text, and its ``<title>``/``<desc>`` are read.
"""

from __future__ import annotations

import re
import struct
from urllib.parse import unquote, urlsplit

from crawler.core.processing.page import Extraction, FetchedPage, ScoredSentence
from crawler.core.processing.processors.base import ProcessorContext
from crawler.core.processing.processors.xmlparse import child_text, parse_xml


def image_size(body: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF or JPEG header, or None."""
    try:
        if body.startswith(b"\x89PNG\r\n\x1a\n") and len(body) >= 24:
            width, height = struct.unpack(">II", body[16:24])
            return int(width), int(height)
        if body[:6] in (b"GIF87a", b"GIF89a") and len(body) >= 10:
            width, height = struct.unpack("<HH", body[6:10])
            return int(width), int(height)
        if body.startswith(b"\xff\xd8"):
            pos = 2
            while pos + 9 < len(body):
                if body[pos] != 0xFF:
                    return None
                marker = body[pos + 1]
                length = struct.unpack(">H", body[pos + 2 : pos + 4])[0]
                if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                    height, width = struct.unpack(">HH", body[pos + 5 : pos + 9])
                    return int(width), int(height)
                pos += 2 + length
    except struct.error:
        return None
    return None


def size_class(size: tuple[int, int] | None) -> str:
    if size is None:
        return "image"
    area = size[0] * size[1]
    if area <= 4:
        return "image-tracking"
    if area < 256 * 256:
        return "image-small"
    if area < 1024 * 768:
        return "image-medium"
    return "image-large"


class ImageProcessor:
    """Stateless."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        name = unquote(urlsplit(page.url).path.rsplit("/", 1)[-1])
        title = " ".join(re.split(r"[_\-.]+", name.rsplit(".", 1)[0])).strip()[:100]
        sentences: tuple[ScoredSentence, ...] = ()
        if body.lstrip()[:5] in (b"<?xml", b"<svg ", b"<svg>") or b"<svg" in body[:512]:
            root = parse_xml(body)
            if root is not None:
                title = child_text(root, "title") or title
                desc = child_text(root, "desc")
                if desc:
                    sentences = (ScoredSentence(desc[: ctx.config.max_description_len], 1.0),)
            media = "image"
        else:
            media = size_class(image_size(body))
        return Extraction(title=title, sentences=sentences, hash_text=body[:65536].hex(),
                          media=media, lang="en", lang_source="default")
