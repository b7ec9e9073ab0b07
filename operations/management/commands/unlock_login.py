"""Unlock the admin login for a client address, or for one username from it.

``manage.py unlock_login --address A`` forgets the failed logins counted from address ``A``
(any usernames); with ``--username U`` it also forgets ``U``'s failures from ``A``, so ``U``
may log in from there at once. Failures are never counted per username alone
(:mod:`operations.login_throttle`), so no account is locked everywhere.

The counts live in the default cache. With ``REDIS_URL`` set it is the shared Redis and this
command reaches it; without (the embedded local run) each web process counts in its own
memory, which no other process can reach: the command then says so and changes nothing
(restart the web server, or wait ``LOGIN_THROTTLE_WINDOW`` seconds).
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from operations.login_throttle import failures_clear

MEMORY_CACHE = "django.core.cache.backends.locmem.LocMemCache"


class Command(BaseCommand):
    help = ("Forget the failed admin logins counted from a client address (and of a username "
            "from it), so that it may log in again before the throttle's window ends.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--address", required=True,
                            help="the client address, as the failed-login log lines name it")
        parser.add_argument("--username", default=None,
                            help="also forget this username's failures from the address")

    def handle(self, *args, address: str, username: str | None, **options) -> None:
        if settings.CACHES["default"]["BACKEND"] == MEMORY_CACHE:
            raise CommandError(
                "the failed logins are counted in each web process's own memory (REDIS_URL is "
                "unset), which this command cannot reach: restart the web server (make run) "
                f"or wait up to {settings.LOGIN_THROTTLE_WINDOW} seconds")
        address = address.strip()
        if not address:
            raise CommandError("--address must name a client address")
        failures_clear(address)
        if username is not None:
            failures_clear(address, username)
        who = f"username {username!r} from {address}" if username is not None else address
        self.stdout.write(f"Unlocked the admin login for {who}.")
