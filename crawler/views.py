"""Public pages of the crawler: ``/bot``, the page the crawler's user agent names.

Layer: Django glue. Webmasters who find the user agent in their logs open this page: it says
what the crawler is, how it honours robots.txt, ``Crawl-delay`` and robots meta tags, how to
slow it down or keep it out, and how to reach the operator (``CRAWLER_CONTACT``). The figures
it states are the crawler's own constants, so the page cannot drift from what the code does.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from crawler.core.scheduler.config import ERROR_CRAWL_DELAY, MAXIMUM_CRAWL_DELAY, ROBOTS_RETRIES

from .identity import robots_agent_name


@require_GET
def bot(request: HttpRequest) -> HttpResponse:
    agent = robots_agent_name()
    context = {
        "agent": agent, "user_agent": settings.CRAWLER_USER_AGENT,
        "contact": settings.CRAWLER_CONTACT,
        "contact_is_mail": "@" in settings.CRAWLER_CONTACT
        and "://" not in settings.CRAWLER_CONTACT,
        "max_crawl_delay": f"{MAXIMUM_CRAWL_DELAY:g}",
        "error_crawl_delay": f"{ERROR_CRAWL_DELAY:g}",
        "robots_retries": ROBOTS_RETRIES,
        "per_host": settings.CRAWLER_PER_HOST_CONCURRENCY,
        "page_deadline": f"{settings.CRAWLER_PAGE_DEADLINE:g}",
        "robots_example": f"User-agent: {agent}\nCrawl-delay: 10\nDisallow: /private/",
    }
    response = render(request, "crawler/bot.html", context)
    response["X-Robots-Tag"] = "noindex"
    return response
