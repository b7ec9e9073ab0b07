"""The site's appearance (Yioop's Appearance settings) as a value the pages read: its name, logo,
colours and footer links.

Layer: Django glue of the ``ranking`` app. :func:`appearance_get` reads the one
:class:`ranking.models.Appearance` row into a :class:`Look`; the search service keeps it for
``SEARCH_OPTIONS_TTL`` seconds (forgotten at once in the process that saved it) and the
context processor :func:`ranking.searchpage.context.site_look` hands it to every template as
``site_look``. The colours reach the pages as CSS custom properties in ``/site/appearance.css``
(:func:`ranking.searchpage.views.appearance_css`): the pages' Content-Security-Policy allows no
inline style. :func:`footer_links` and :func:`contrast` are the rules the admin's form checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import DatabaseError

from ranking.models import Appearance

DEFAULT_NAME = "Yioopy"
MAX_FOOTER_LINKS = 12
# what may be uploaded as a logo: its first bytes -> its content type (no SVG: an SVG is a
# document that can hold scripts)
LOGO_TYPES = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg",
              b"GIF87a": "image/gif", b"GIF89a": "image/gif"}
MAX_LOGO_BYTES = 256 * 1024
_HREF = re.compile(r"^(https?://[^\s<>\"']+|/[^\s<>\"']*)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Look:
    """What the pages show of the appearance; ``logo_version`` is "" when there is no logo
    (else a value that changes with it, for the logo's url)."""

    name: str = DEFAULT_NAME
    accent: str = "#0b57d0"
    link: str = "#0b57d0"
    header: str = "#ffffff"
    footer: tuple[tuple[str, str], ...] = ()
    logo_version: str = ""
    version: str = "0"

    @property
    def short_name(self) -> str:
        """The name cut to OpenSearch's ShortName limit of 16 characters."""
        return self.name[:16]

    def css(self) -> str:
        """The colours as the custom properties ``static/ranking/search.css`` reads (named
        apart from the admin's own ``--accent``, which the admin's pages keep)."""
        return (f":root {{ --site-accent: {self.accent}; --site-link: {self.link}; "
                f"--site-head-bg: {self.header}; }}\n")


def footer_links(text: str) -> tuple[tuple[str, str], ...]:
    """The footer links of the admin's text: one ``Label | url`` a line, the url an http(s)
    url or a path from ``/``; blank lines skipped. ValueError names the first bad line."""
    links: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        label, bar, href = (part.strip() for part in line.partition("|"))
        if not bar or not label or not _HREF.match(href):
            raise ValueError(f"line {number}: write it as Label | https://… or Label | /path")
        if len(label) > 60:
            raise ValueError(f"line {number}: the label is longer than 60 characters")
        links.append((label, href))
    if len(links) > MAX_FOOTER_LINKS:
        raise ValueError(f"at most {MAX_FOOTER_LINKS} links")
    return tuple(links)


def _luminance(colour: str) -> float:
    """WCAG 2's relative luminance of ``#rrggbb``."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two ``#rrggbb`` colours (1 to 21; text needs 4.5)."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def logo_type(data: bytes) -> str | None:
    """The content type of an accepted logo image (PNG, JPEG, GIF), else None."""
    for magic, kind in LOGO_TYPES.items():
        if data.startswith(magic):
            return kind
    return None


def appearance_get() -> Look:
    """The saved appearance (the defaults when none was saved)."""
    row = Appearance.objects.filter(pk=1).defer("logo").first()
    if row is None:
        return Look()
    try:
        links = footer_links(row.footer_links)
    except ValueError:  # saved around the admin's form: show none rather than a broken one
        links = ()
    stamp = str(int(row.updated_at.timestamp())) if row.updated_at else "0"
    return Look(row.site_name or DEFAULT_NAME, row.accent_color, row.link_color,
                row.header_color, links, stamp if row.logo_type else "", stamp)


def logo_get() -> tuple[bytes, str] | None:
    """(the logo's bytes, its content type), or None when there is none."""
    try:
        row = Appearance.objects.filter(pk=1).only("logo", "logo_type").first()
    except DatabaseError:
        return None
    if row is None or not row.logo_type:
        return None
    return bytes(row.logo), row.logo_type
