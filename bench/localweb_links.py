"""One link of a local-web page as the local web's own tools resolve it
(../shared/localweb/manifest.py), for the benchmarks that walk the served files rather than
crawl them (crawl_bench's reachable pages, prioritisation_eval's web graph). The callers put
../shared/localweb on sys.path first."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin


def link_target(page_url: str, href: bytes, by_host: Mapping[str, Any]) -> str | None:
    """The canonical url an ``href`` attribute (raw bytes) of the page at ``page_url`` leads
    to; None for fragments, mail and script links, and urls the local web cannot serve."""
    import manifest  # ../shared/localweb

    text = html.unescape(href.decode("utf-8", "replace")).strip()
    if not text or text.startswith(("#", "mailto:", "javascript:")):
        return None
    try:
        return manifest.canonical(urljoin(page_url, text), by_host)
    except ValueError:
        return None
