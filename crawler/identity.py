"""The crawler's identity: the name robots.txt groups and robots meta tags address it by.

Layer: Django glue (reads ``settings.CRAWLER_USER_AGENT``). Queue servers match robots.txt groups
with it, fetchers match ``<meta name="...">`` robots tags with it, and the ``/bot`` page
(``crawler.views``) tells webmasters to use it.
"""

from __future__ import annotations

from django.conf import settings


def robots_agent_name() -> str:
    """The user agent's first word up to its first slash (``YioopyBot`` for
    ``YioopyBot/0.1 (+url)``)."""
    return settings.CRAWLER_USER_AGENT.split("/")[0].split()[0]
