"""The admin's change lists take no regular-expression lookups from the url.

Layer: the operations app (web processes). Django's admin lets a change list filter on any
lookup of a model's own fields given in the query string (``?name__regex=...``). A regular
expression there is run by the database: on SQLite by Python's ``re``, so a malformed one
ended in a server error and a catastrophic one (``(a+)+$``) held a web worker, and on
PostgreSQL by its own engine. :class:`SafeLookupsAdmin` refuses ``regex`` and ``iregex``
lookups from the url; Django answers a refused lookup with 400 Bad Request. Every model admin
of the project derives from it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models.constants import LOOKUP_SEP

REFUSED_LOOKUPS = frozenset({"regex", "iregex"})


class SafeLookupsAdmin(admin.ModelAdmin):
    """A model admin whose change list refuses regular-expression lookups from the url."""

    def lookup_allowed(self, lookup: str, value: Any, request: Any = None) -> bool:
        if lookup.rsplit(LOOKUP_SEP, 1)[-1] in REFUSED_LOOKUPS:
            return False
        return super().lookup_allowed(lookup, value, request)
