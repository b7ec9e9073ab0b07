"""Throttling and logging of failed admin logins (issues 18 and 34).

Every failed authentication (Django's ``user_login_failed`` signal) is logged at WARNING with
the username and the client address, and counted twice in the default cache:

* per (username, client address): ``LOGIN_THROTTLE_FAILURES`` failures within
  ``LOGIN_THROTTLE_WINDOW`` seconds of the first lock that username *from that address only*;
* per client address: ``LOGIN_THROTTLE_ADDRESS_FAILURES`` failures (any usernames) lock that
  address for every username (one address guessing many accounts).

A locked pair or address is refused by the admin login form, right password or not, until its
window ends. Nothing is counted per username alone: failures from one address never lock the
account out from another address, so the right password from an address that did not fail
always gets in. Usernames are counted normalised (Unicode NFKC, surrounding blanks stripped,
case folded): ``Victim``, `` victim`` and ``VICTIM`` are one username for counting. A
successful login clears its own pair's count only (the address's count stays, so logging in to
one's own account does not reset the guessing of another's).

Unlocking: :func:`failures_clear` (``manage.py unlock_login --address A [--username U]``)
clears an address's count and, given a username, that pair's; or wait for the window to end.

The counts live in the default cache: Redis when ``REDIS_URL`` is set (shared by every web
process, and by ``manage.py unlock_login``), else a per-process memory cache (see
``searchsite.settings.base``: each gunicorn worker then counts on its own, and only restarting
the web server clears its counts). When that cache cannot be reached (Redis down), the throttle
is skipped, with an ERROR logged for each attempt: an administrator can still log in to see
what is wrong, and the failed logins are still logged.

Layer: the operations app (web processes). The admin site uses the form through
``operations.admin``. The client address is ``operations.client_address``'s (the socket's peer,
or a forwarded header from a trusted proxy), as for search's query log and ``/metrics``.
"""

from __future__ import annotations

import logging
import unicodedata

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


def username_key(username: str) -> str:
    """``username`` as failures are counted: NFKC, blanks around it stripped, case folded."""
    return unicodedata.normalize("NFKC", username).strip().casefold()


def _pair_key(username: str, address: str) -> str:
    return f"{KEY_PREFIX}:pair:{address}:{username_key(username)}"


def _address_key(address: str) -> str:
    return f"{KEY_PREFIX}:addr:{address}"


def _cache_unreachable(action: str, exc: Exception) -> None:
    logger.error("login throttle skipped: the cache could not be reached while %s (%s: %s)",
                 action, type(exc).__name__, exc)


def failure_counts(username: str, address: str) -> tuple[int, int]:
    """(failures of ``username`` from ``address``, failures from ``address``) in their current
    windows; (0, 0) when the cache cannot be reached."""
    pair, addr = _pair_key(username, address), _address_key(address)
    try:
        counts = cache.get_many([pair, addr])
    except Exception as exc:  # the cache backend's own errors: redis-py's, or a socket's
        _cache_unreachable("counting failures", exc)
        return 0, 0
    return int(counts.get(pair, 0)), int(counts.get(addr, 0))


def is_locked(username: str, address: str) -> bool:
    """Whether ``username`` may not log in from ``address`` now: that pair, or that address,
    has reached its limit."""
    pair, addr = failure_counts(username, address)
    return (pair >= settings.LOGIN_THROTTLE_FAILURES
            or addr >= settings.LOGIN_THROTTLE_ADDRESS_FAILURES)


def failures_clear(address: str, username: str | None = None) -> None:
    """Forget the failures counted from ``address``: of ``username`` from it when given (a
    successful login, or an operator unlocking an account there), else of the address itself
    (every username from it then has only its pair's count)."""
    key = _pair_key(username, address) if username is not None else _address_key(address)
    try:
        cache.delete(key)
    except Exception as exc:  # see failure_counts
        _cache_unreachable("clearing failures", exc)


def _count(key: str) -> None:
    cache.add(key, 0, timeout=settings.LOGIN_THROTTLE_WINDOW)  # the window starts here
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr: a new window
        cache.add(key, 1, timeout=settings.LOGIN_THROTTLE_WINDOW)


def _failure_add(username: str, address: str) -> None:
    try:
        _count(_pair_key(username, address))
        _count(_address_key(address))
    except Exception as exc:  # see failure_counts
        _cache_unreachable("counting a failure", exc)


@receiver(user_login_failed, dispatch_uid="operations.login_throttle.failed")
def login_failed_record(sender, credentials: dict, request: HttpRequest | None = None,
                        **kwargs) -> None:
    username = str(credentials.get("username", ""))
    address = client_address(request)
    _failure_add(username, address)
    pair, addr = failure_counts(username, address)
    logger.warning("failed login for username %r from %s (%d failure(s) of this username and "
                   "%d from this address in the window)", username, address, pair, addr)


@receiver(user_logged_in, dispatch_uid="operations.login_throttle.succeeded")
def login_succeeded_clear(sender, request: HttpRequest | None, user, **kwargs) -> None:
    failures_clear(client_address(request), user.get_username())


class ThrottledAdminAuthenticationForm(AdminAuthenticationForm):
    """The admin login form, refusing a locked (username, address) pair or a locked client
    address before it checks the password (so a right password does not get through a
    lockout either; another address is not locked by these failures)."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        address = client_address(self.request)
        if is_locked(username, address):
            logger.warning("refused login for username %r from %s: too many failures",
                           username, address)
            minutes = max(1, round(settings.LOGIN_THROTTLE_WINDOW / 60))
            raise ValidationError(
                "Too many failed login attempts for this account from this address, or from "
                f"this address. Try again in up to {minutes} minutes.", code="throttled")
        return super().clean()
