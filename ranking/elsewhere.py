"""Where a ``site:`` query's host is, when the index searched has no page of it.

Layer: glue of the ``ranking`` app (no Django imports). After a second crawl a user searched
``site:docs.python.org asyncio`` and got "No results": search still read the first crawl, and
nothing said so. A search with no result whose query names ``site:`` hosts asks here which
other finished crawls hold pages of those hosts; the page names them, with a link that
searches the crawl (``its=``), and the JSON answer lists them (``elsewhere``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from ranking.core.query.parser import ParsedQuery

MAX_CRAWLS = 10  # finished crawls looked at, newest first


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """A crawl not searched that holds pages of ``host``: its ``label``, timestamp ``its``
    and the search page url of the query over it (``href``)."""

    host: str
    label: str
    its: int
    href: str

    def as_dict(self) -> dict:
        return {"host": self.host, "crawl": self.label, "its": self.its, "href": self.href}


def site_hosts(parsed: ParsedQuery) -> list[str]:
    """The hosts the query's ``site:`` meta words name (``site:all`` left out), in order."""
    hosts: list[str] = []
    for conjunct in parsed.disjuncts:
        for meta in conjunct.meta:
            host = meta[len("site:"):] if meta.startswith("site:") else ""
            if host and host != "all" and host not in hosts:
                hosts.append(host)
    return hosts


def crawls_holding(hosts: Sequence[str], searched: Sequence[int],
                   crawls: Sequence[tuple[int, str]], holds: Callable[[int, str], bool],
                   params: dict[str, str]) -> list[Elsewhere]:
    """The ``crawls`` ((timestamp, label), newest first) other than the ``searched`` ones
    where ``holds(its, host)`` says a page of one of ``hosts`` is, one entry per crawl (its
    first host found); ``params`` are the search's, the link adds the crawl's ``its``."""
    found: list[Elsewhere] = []
    for its, label in crawls[:MAX_CRAWLS]:
        if its in searched:
            continue
        for host in hosts:
            if holds(its, host):
                href = "/?" + urlencode({**params, "its": str(its)})
                found.append(Elsewhere(host, label, its, href))
                break
    return found
