"""Template context processor: ``site_look``, the site's appearance (:class:`ranking.searchpage.
appearance.Look`), for every template (the search pages and the admin's header).

Layer: Django glue, named in ``TEMPLATES``' ``context_processors`` (settings).
"""

from __future__ import annotations

from django.http import HttpRequest

from ranking.search_service import search_service

from .appearance import Look


def site_look(request: HttpRequest) -> dict[str, Look]:
    return {"site_look": search_service().appearance()}
