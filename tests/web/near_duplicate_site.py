"""A fixture site with near-duplicate pages, for the near-duplicate tests: a guide page, a
second version of it with one sentence changed and a print copy with one word changed (both
reached only through the guide page, so the guide is fetched first), a page linked only from
the second version (a crawl that skips a near-duplicate's links never fetches it), and two
pages of other text. Every page holds the word :data:`WORD`.

    with FixtureServer(near_duplicate_route()) as server: ...
"""

from __future__ import annotations

import random

from tests.fixtures.sites import Request, Response

HTML = {"Content-Type": "text/html; charset=utf-8"}
WORD = "frobnicator"
GUIDE, VERSION, PRINT = "/guide/intro.html", "/v2/guide/intro.html", "/print/intro.html"
ONLY_FROM_VERSION = "/v2/guide/only.html"
OTHERS = ("/guide/setup.html", "/api/widget.html")
_VOCABULARY = ("widget assembly cable bracket sensor module firmware driver socket housing "
               "panel bolt screw gasket valve pump motor relay fuse switch board chassis rail "
               "clamp spring lever hinge latch bearing shaft gear pulley belt filter nozzle "
               "hose fitting coupling flange seal washer nut rivet").split()


def prose(seed: int, sentences: int = 120) -> list[str]:
    """Sentences of generated text (deterministic for a seed)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(_VOCABULARY) for _ in range(rng.randint(8, 14))).capitalize()
            + f" {WORD}." for _ in range(sentences)]


def _page(title: str, sentences: list[str], links: list[tuple[str, str]]) -> bytes:
    paragraphs = "".join(f"<p>{s}</p>" for s in sentences)
    nav = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in links)
    return (f'<!doctype html><html lang="en"><head><title>{title}</title></head><body>'
            f"<h1>{title}</h1>{paragraphs}<ul>{nav}</ul></body></html>").encode()


def pages() -> dict[str, bytes]:
    guide = prose(1)
    version = list(guide)
    version[20] = prose(99, 1)[0]
    printed = list(guide)
    printed[5] = printed[5].replace(" ", " extra ", 1)
    return {
        "/": _page("Widget manual", prose(5, 3), [(GUIDE, "Introduction"),
                                                  (OTHERS[0], "Setup"), (OTHERS[1], "API")]),
        GUIDE: _page("Introduction", guide, [(VERSION, "Version 2"), (PRINT, "Print")]),
        VERSION: _page("Introduction (version 2)", version,
                       [(ONLY_FROM_VERSION, "New in version 2")]),
        PRINT: _page("Introduction", printed, []),
        ONLY_FROM_VERSION: _page("New in version 2", prose(7), []),
        OTHERS[0]: _page("Setup", prose(2), [(GUIDE, "Introduction")]),
        OTHERS[1]: _page("API", prose(3), [(GUIDE, "Introduction")]),
    }


def near_duplicate_route():
    served = pages()

    def route(request: Request) -> Response:
        if request.path == "/robots.txt":
            return Response(200, b"User-agent: *\nDisallow:\n", {"Content-Type": "text/plain"})
        body = served.get(request.path)
        if body is None:
            return Response(404, b"not found", {"Content-Type": "text/plain"})
        return Response(200, body, HTML)

    return route
