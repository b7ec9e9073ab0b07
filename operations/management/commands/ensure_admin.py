"""Create the administrator account once, for the one-command start.

The user name and password come from ADMIN_USERNAME / ADMIN_PASSWORD (and ADMIN_EMAIL); when no
password is given a random one is generated and printed once. An existing account is left alone.
"""

from __future__ import annotations

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the admin account from ADMIN_USERNAME/ADMIN_PASSWORD, or with a printed one."

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        username = os.environ.get("ADMIN_USERNAME", "admin")
        email = os.environ.get("ADMIN_EMAIL", "")
        password = os.environ.get("ADMIN_PASSWORD", "")
        existing = User.objects.filter(username=username).first()
        if existing is not None:
            if password and not existing.check_password(password):
                existing.set_password(password)
                existing.save(update_fields=["password"])
                self.stdout.write(f"Admin account {username!r}: password set from ADMIN_PASSWORD.")
            else:
                self.stdout.write(f"Admin account {username!r} exists.")
            return
        generated = not password
        if generated:
            password = secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email=email, password=password)
        if generated:
            self.stdout.write(self.style.SUCCESS(
                f"Created admin account: user {username!r}, password {password!r} "
                "(shown only this once; set ADMIN_PASSWORD to choose your own)."))
        else:
            self.stdout.write(self.style.SUCCESS(f"Created admin account {username!r}."))
