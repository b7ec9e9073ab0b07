"""A fixture site for the archive tests: the normal site, a NOARCHIVE page, a redirect."""

from __future__ import annotations

from tests.fixtures.sites import Router, normal_site
from tests.fixtures.sites.server import Response
from tests.fixtures.sites.sites import html, html_page

NOARCHIVE_WORD = "zqnoarchiveword"


def archive_site(name: str = "gamma"):
    """(site, route): ``site`` the normal site (its pages and words), ``route`` it plus
    ``/noarchive.html`` (robots meta NOARCHIVE: stored without a cached copy) and ``/moved``
    (a 301 to ``/page/1.html``)."""
    site = normal_site(name, pages=6, crawl_delay=0.0)
    noarchive = html_page("Not archived", f"a page with the word {NOARCHIVE_WORD}",
                          ["/page/2.html"]).replace(
        b"<title>", b'<meta name="robots" content="noarchive"><title>')
    route = (Router().add("/", site.route)
             .add("/noarchive.html", lambda request: html(noarchive))
             .add("/moved", lambda request: Response(301, b"", {"Location": "/page/1.html"})))
    return site, route


def seeds_of(server) -> tuple[str, ...]:
    return (server.url("/"), server.url("/noarchive.html"), server.url("/moved"))
