"""The search page's Images, Videos and News tabs as the meta words they search.

Layer: ``ranking.core.query`` (pure Python). The image processor gives an image document
``media:image-small``, ``-medium`` or ``-large`` (``media:image`` when its size cannot be read,
``media:image-tracking`` for a pixel, never shown); the Open Graph video scraper gives a video
page ``media:video`` and ``duration:<t>-plus`` / ``-minus`` words (``crawler.core.processing``).
A news source's item (``crawler.core.news``) is ``media:news``; the News tab searches the
news index, not a crawl's. Each alternative :func:`tab_words` returns is added to a copy of every disjunct
(:func:`ranking.core.query.periods.with_period`).
"""

from __future__ import annotations

TABS = ("", "images", "videos", "news")
IMAGE_SIZES = ("", "small", "medium", "large")
DURATIONS = ("", "short", "medium", "long")
_IMAGE_WORDS = ("media:image-small", "media:image-medium", "media:image-large", "media:image")
_DURATION_WORDS = {"short": "media:video duration:5-minus",
                   "medium": "media:video duration:5-plus duration:20-minus",
                   "long": "media:video duration:20-plus"}


def tab_words(tab: str, size: str = "", duration: str = "") -> tuple[str, ...]:
    """The alternatives a tab searches (each one or more meta words): an image of any size or
    of ``size``, a video of any length or of ``duration`` (short: under 5 minutes, medium: 5
    to 20, long: over 20), a news item; () for the All tab or an unknown one."""
    if tab == "images":
        return (f"media:image-{size}",) if size in IMAGE_SIZES[1:] else _IMAGE_WORDS
    if tab == "videos":
        return (_DURATION_WORDS.get(duration, "media:video"),)
    if tab == "news":
        return ("media:news",)
    return ()
