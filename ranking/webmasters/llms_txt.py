"""``/llms/<host>/llms.txt``: an ``llms.txt`` of a crawled site, served by the engine from its
index (issue 38, item 2).

Layer: Django glue of the ``ranking`` app. The llms.txt format (llmstxt.org): a Markdown file
whose ``#`` heading names the site, a ``>`` block quote summarises it, and ``##`` sections
list links, one ``- [title](url): notes`` line each. Here: the site's host as the heading, a
quote that says which index and crawl it comes from and how many pages it lists, and one
section ``## Pages`` of the site's indexed pages (``site:<host>`` in the index searched, as
the search page ranks them, at most ``MAX_PAGES``; a ``host:port`` lists that port's pages
only; ``?its=`` another crawl open to anyone),
each with its title and the start of its description as its notes.

A host with no indexed page is a 404 (in the same format); a name that is not a host a 400.
Served as ``text/markdown``, never cached by proxies for long (the index changes).
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from indexer.core.errors import CorruptIndexError
from ranking.core.errors import NoIndexError, ShardError
from ranking.params import parse_int
from ranking.search_service import search_service

MAX_PAGES = 200
NOTE_CHARS = 200
_HOST = re.compile(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?")
_TAGS = re.compile(r"<[^>]*>")
_MARKDOWN_SPECIAL = re.compile(r"([\[\]()\\`*_])")


def _plain(text: str) -> str:
    return " ".join(html.unescape(_TAGS.sub("", text or "")).split())


def _note(snippet: str) -> str:
    text = _plain(snippet).replace(" ... ", " ").strip(" .")
    if len(text) > NOTE_CHARS:
        text = text[:NOTE_CHARS].rsplit(" ", 1)[0] + "…"
    return text


def _escaped(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _answer(body: str, status: int) -> HttpResponse:
    response = HttpResponse(body, content_type="text/markdown; charset=utf-8", status=status)
    response["Cache-Control"] = "max-age=300"
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_GET
def site_llms_txt(request: HttpRequest, host: str) -> HttpResponse:
    host = host.strip().lower()
    if not _HOST.fullmatch(host):
        return _answer("# Not a host name\n\n> Give a host name, as /llms/docs.example.org/"
                       "llms.txt\n", 400)
    service = search_service()
    try:
        its, shards = service.shards(parse_int(request.GET.get("its"), None))
        found = service.searcher(shards, service.options()).search(
            f"site:{host.split(':')[0]}", num=MAX_PAGES, snippets=True)
    except (NoIndexError, CorruptIndexError, ShardError):
        found = None
    # site: names a host without its port: a host:port keeps the pages of that port only
    results = [r for r in (found.results if found is not None else ())
               if ":" not in host or urlsplit(r.url).netloc.lower() == host]
    if not results:
        return _answer(f"# {host}\n\n> This search engine has indexed no page of {host}.\n",
                       404)
    name = service.appearance().name
    lines = [f"# {host}", "",
             f"> The pages of {host} that {name} indexed (crawl {its}), as its search ranks "
             f"them: {len(results)} listed.", "", "## Pages", ""]
    for r in results:
        title = _escaped(_plain(r.plain_title or r.title) or r.url)
        note = _note(r.snippet)
        url = r.url.replace(")", "%29").replace(" ", "%20")
        lines.append(f"- [{title}]({url})" + (f": {_escaped(note)}" if note else ""))
    return _answer("\n".join(lines) + "\n", 200)
