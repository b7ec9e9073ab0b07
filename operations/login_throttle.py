"""Throttling and logging of failed admin logins (issue 18).

Every failed authentication (Django's ``user_login_failed`` signal) is logged at WARNING with
the username and the client address, and counted per username and per client address in the
default cache. Once either count reaches ``LOGIN_THROTTLE_FAILURES`` within
``LOGIN_THROTTLE_WINDOW`` seconds of its first failure, the admin login form refuses every
further attempt for that username or address, right password or not, until the window ends.
A successful login clears both counts.

The counts live in the default cache: Redis when ``REDIS_URL`` is set (shared by every web
process), else a per-process memory cache (see ``searchsite.settings.base``: each gunicorn
worker then counts on its own). When that cache cannot be reached (Redis down), the throttle is
skipped, with an ERROR logged for each attempt: an administrator can still log in to see what
is wrong, and the failed logins are still logged.

Layer: the operations app (web processes). The admin site uses the form through
``operations.admin``. The client address is ``operations.client_address``'s (the socket's peer,
or a forwarded header from a trusted proxy), as for search's query log and ``/metrics``.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.dispatch import receiver
from django.http import HttpRequest

from operations.client_address import client_address

# the logger keeps its name from before this module left the crawler app: operators filter on it
logger = logging.getLogger("crawler.login")
KEY_PREFIX = "login-failures"


def _keys(username: str, address: str) -> list[str]:
    return [f"{KEY_PREFIX}:user:{username.strip().lower()}", f"{KEY_PREFIX}:addr:{address}"]


def _cache_unreachable(action: str, exc: Exception) -> None:
    logger.error("login throttle skipped: the cache could not be reached while %s (%s: %s)",
                 action, type(exc).__name__, exc)


def failure_count(username: str, address: str) -> int:
    """The larger of the username's and the address's failures in the current window (0 when
    the cache cannot be reached)."""
    try:
        counts = cache.get_many(_keys(username, address)).values()
    except Exception as exc:  # the cache backend's own errors: redis-py's, or a socket's
        _cache_unreachable("counting failures", exc)
        return 0
    return max(counts, default=0)


def is_locked(username: str, address: str) -> bool:
    return failure_count(username, address) >= settings.LOGIN_THROTTLE_FAILURES


def failures_clear(username: str, address: str) -> None:
    try:
        cache.delete_many(_keys(username, address))
    except Exception as exc:  # see failure_count
        _cache_unreachable("clearing failures", exc)


def _failure_add(username: str, address: str) -> None:
    try:
        for key in _keys(username, address):
            cache.add(key, 0, timeout=settings.LOGIN_THROTTLE_WINDOW)  # the window starts here
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr: a new window
                cache.add(key, 1, timeout=settings.LOGIN_THROTTLE_WINDOW)
    except Exception as exc:  # see failure_count
        _cache_unreachable("counting a failure", exc)


@receiver(user_login_failed, dispatch_uid="operations.login_throttle.failed")
def login_failed_record(sender, credentials: dict, request: HttpRequest | None = None,
                        **kwargs) -> None:
    username = str(credentials.get("username", ""))
    address = client_address(request)
    _failure_add(username, address)
    logger.warning("failed login for username %r from %s (%d failure(s) in the window)",
                   username, address, failure_count(username, address))


@receiver(user_logged_in, dispatch_uid="operations.login_throttle.succeeded")
def login_succeeded_clear(sender, request: HttpRequest | None, user, **kwargs) -> None:
    failures_clear(user.get_username(), client_address(request))


class ThrottledAdminAuthenticationForm(AdminAuthenticationForm):
    """The admin login form, refusing a locked username or client address before it checks
    the password (so a right password does not get through a lockout either)."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        address = client_address(self.request)
        if is_locked(username, address):
            logger.warning("refused login for username %r from %s: too many failures",
                           username, address)
            minutes = max(1, round(settings.LOGIN_THROTTLE_WINDOW / 60))
            raise ValidationError(
                "Too many failed login attempts for this account or from this address. "
                f"Try again in up to {minutes} minutes.", code="throttled")
        return super().clean()
