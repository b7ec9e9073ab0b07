"""A small index for the semantic signal's tests: a concept query ("fixing a flat tire") whose
right page (a bicycle puncture repair, no "flat tire" in its title) loses on words to pages
that hold "fixing flat" in their titles in other senses (furniture, roofs, archives), and
three topics of pages for the Similar pages. Built with the crawler's own page processor and
the real bundle writer, as a crawl would write it."""

from __future__ import annotations

from pathlib import Path

from crawler.core.processing.indexing import batch_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.writer import IndexBundleWriter

ITS = 1_700_000_000
CONCEPT_QUERY = "fixing a flat tire"
RIGHT_PAGE = "http://bikes.example.test/puncture.html"
BIKE_PAGES = ("http://bikes.example.test/brakes.html", "http://bikes.example.test/chain.html")


def _html(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><title>{title}</title></head>'
            f"<body><h1>{title}</h1><p>{body}</p></body></html>")


PAGES = {
    RIGHT_PAGE: _html(
        "Repairing a punctured bicycle wheel",
        "When a bicycle tire goes flat on the road, fixing the puncture takes ten minutes. "
        "Take the wheel off, lever the tyre from the rim, find the hole in the inner tube, "
        "glue a patch over it and pump the tube up again before you ride on."),
    BIKE_PAGES[0]: _html(
        "Adjusting bicycle brakes",
        "Rim brakes and disc brakes on a bicycle wear with every ride. Tighten the cable, "
        "centre the calipers over the wheel and check the pads before a long cycling trip."),
    BIKE_PAGES[1]: _html(
        "Cleaning and oiling a bicycle chain",
        "A dirty bicycle chain wears the gears and the cassette. Wipe the chain, oil each "
        "link, and ride the bike for a minute so the lubricant reaches the rollers."),
    "http://home.example.test/furniture.html": _html(
        "Fixing flat pack furniture",
        "Fixing flat pack furniture needs a screwdriver, dowels and patience. People who "
        "tire of the printed instructions can hire an assembler for wardrobes and shelves; "
        "fixing flat panels to the wall keeps a tall bookcase from tipping."),
    "http://home.example.test/roof.html": _html(
        "Flat roof fixing guide",
        "Fixing a flat roof starts with the felt and the membrane. Never tire of clearing "
        "the gutters and the drains: standing water is what ruins a flat roof first."),
    "http://office.example.test/archive.html": _html(
        "Fixing flat files in the office archive",
        "Flat files hold maps and drawings. Fixing their drawers, labelling each folder and "
        "keeping an index means the archivists never tire of finding plans."),
    "http://food.example.test/bread.html": _html(
        "Baking bread at home",
        "Knead the dough, let it rise for two hours, shape the loaf and bake it in a hot oven "
        "until the crust is brown and the bread sounds hollow."),
    "http://food.example.test/soup.html": _html(
        "Making vegetable soup",
        "Chop onions, carrots and celery, soften them in butter, add stock and simmer the "
        "soup until the vegetables are tender, then season it."),
}


def build_semantic_site(work: Path, its: int = ITS, server: int = 0) -> Path:
    """The fixture site's index in ``work`` (``qs<server>/IndexData<its>``)."""
    processor = PageProcessor()
    processed = [processor.process(FetchedPage(url, body.encode(), 200,
                                               {"Content-Type": "text/html; charset=utf-8"},
                                               fetched_at=float(its)))
                 for url, body in PAGES.items()]
    path = work / f"qs{server}" / f"IndexData{its}"
    with IndexBundleWriter(path) as writer:
        writer.append(batch_documents(processed))
    return path
