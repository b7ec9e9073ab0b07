"""A small index with images and videos for the search page's Images and Videos tabs: three
lighthouse PNGs of three sizes (the image processor's media:image-small/-medium/-large), three
lighthouse video pages with Open Graph durations (the built-in video scraper's media:video and
duration: words) and two lighthouse text pages. Built with the crawler's own processor (its
built-in scrapers on) and index writer."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from crawler.core.processing.builtin_scrapers import BUILTIN_SCRAPERS
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.indexing import batch_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.writer import IndexBundleWriter

ITS = 1_700_000_200
FETCHED_AT = 1_700_000_000.0
IMAGES = {"small": (40, 40), "medium": (400, 300), "large": (1200, 900)}
VIDEOS = {"short": 180, "medium": 840, "long": 3000}


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A real PNG of one colour, made by hand: signature, IHDR, IDAT, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _video(title: str, seconds: int) -> bytes:
    return (f'<!doctype html><html lang="en"><head><title>{title}</title>'
            '<meta property="og:type" content="video.movie">'
            f'<meta property="video:duration" content="{seconds}">'
            '<meta property="og:image" content="https://cdn.example.test/poster.jpg">'
            f"</head><body><main><h1>{title}</h1><p>A film about the lighthouse and its "
            "keeper.</p></main></body></html>").encode()


def media_pages() -> list[tuple[str, bytes, str]]:
    """(url, body, content type) of every page of the site."""
    colours = {"small": (200, 30, 30), "medium": (30, 120, 200), "large": (40, 160, 60)}
    pages = [(f"http://img.example.test/lighthouse-{size}.png",
              png(*IMAGES[size], colours[size]), "image/png") for size in IMAGES]
    pages += [(f"http://video.example.test/{kind}.html",
               _video(f"Lighthouse film {kind}", seconds), "text/html; charset=utf-8")
              for kind, seconds in VIDEOS.items()]
    pages += [(f"http://text.example.test/{i}.html",
               (f"<!doctype html><html lang='en'><head><title>Lighthouse notes {i}</title>"
                "</head><body><p>Notes about the lighthouse lamp.</p>"
                f"<img src='http://img.example.test/lighthouse-small.png' alt='lighthouse'>"
                "</body></html>").encode(), "text/html; charset=utf-8") for i in range(2)]
    return pages


def build_media_index(work: Path) -> Path:
    processor = PageProcessor(PageProcessingConfig(scrapers=BUILTIN_SCRAPERS))
    processed = [processor.process(FetchedPage(url, body, 200, {"Content-Type": kind},
                                               fetched_at=FETCHED_AT))
                 for url, body, kind in media_pages()]
    path = work / "qs0" / f"IndexData{ITS}"
    with IndexBundleWriter(path) as writer:
        writer.append(batch_documents(processed))
    return path
