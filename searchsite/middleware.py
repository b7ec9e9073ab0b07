"""Content-Security-Policy on the admin pages (Django 5.2 has no built-in CSP).

Every response under the admin's url prefix gets the ``Content-Security-Policy`` header of
``settings.ADMIN_CONTENT_SECURITY_POLICY`` (scripts and styles from this site only, no framing,
forms posting only here), unless a view set one of its own. The search pages are left alone.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse


class AdminContentSecurityPolicy:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.prefix: str | None = None  # the admin's path, resolved on the first request

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.prefix is None:
            self.prefix = reverse("admin:index")
        policy = settings.ADMIN_CONTENT_SECURITY_POLICY
        if policy and request.path.startswith(self.prefix):
            response.headers.setdefault("Content-Security-Policy", policy)
        return response
