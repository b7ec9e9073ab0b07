"""The base of every model admin of the project: no regular expression from a change list's url,
no integer a database column cannot hold.

Layer: the operations app (web processes).

* Django's admin lets a change list filter on any lookup of a model's own fields given in the
  query string (``?name__regex=...``). A regular expression there is run by the database: on
  SQLite by Python's ``re``, so a malformed one ended in a server error and a catastrophic one
  (``(a+)+$``) held a web worker. :class:`SafeModelAdmin` refuses ``regex`` and ``iregex``
  lookups from the url; Django answers a refused lookup with 400 Bad Request.
* SQLite stores integers in 64 bits and Django gives its integer fields no bound there, so
  ``10**40`` in a form's number field reached the database and failed with ``OverflowError``
  (a server error). Every integer form field of a model admin is bounded to the signed 64-bit
  range (and to 0 upwards for the positive kinds): a larger value is a form error. The same
  for the keys a choice of related rows posts (a many-to-many's ``scrapers=10**40`` was looked
  up in the database as it was).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.constants import LOOKUP_SEP

REFUSED_LOOKUPS = frozenset({"regex", "iregex"})
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
_POSITIVE = (models.PositiveIntegerField, models.PositiveSmallIntegerField,
             models.PositiveBigIntegerField)


def _fits(value: Any) -> bool:
    """Whether ``value``, if it is an integer key, fits a signed 64-bit column."""
    try:
        number = int(str(value).strip())
    except ValueError:
        return True  # not an integer: Django's own check refuses it
    return INT64_MIN <= number <= INT64_MAX


class BoundedModelChoiceField(forms.ModelChoiceField):
    """A related row's choice whose key is refused (invalid choice) past 64 bits."""

    def to_python(self, value: Any) -> Any:
        if value not in self.empty_values and not _fits(value):
            raise forms.ValidationError(self.error_messages["invalid_choice"],
                                        code="invalid_choice")
        return super().to_python(value)


class BoundedModelMultipleChoiceField(forms.ModelMultipleChoiceField):
    """Related rows' choice whose keys are refused (invalid choice) past 64 bits."""

    def _check_values(self, value: Any) -> Any:
        for key in value:
            if not _fits(key):
                raise forms.ValidationError(self.error_messages["invalid_pk_value"],
                                            code="invalid_pk_value", params={"pk": key})
        return super()._check_values(value)


class SafeModelAdmin(admin.ModelAdmin):
    """A model admin whose change list refuses regular-expression lookups from the url and
    whose integer form fields hold only what a 64-bit column holds."""

    def lookup_allowed(self, lookup: str, value: Any, request: Any = None) -> bool:
        if lookup.rsplit(LOOKUP_SEP, 1)[-1] in REFUSED_LOOKUPS:
            return False
        return super().lookup_allowed(lookup, value, request)

    def formfield_for_dbfield(self, db_field: models.Field, request: Any,
                              **kwargs: Any) -> forms.Field | None:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if isinstance(db_field, models.IntegerField) and isinstance(field, forms.IntegerField):
            low = 0 if isinstance(db_field, _POSITIVE) else INT64_MIN
            field.validators.extend((MinValueValidator(low), MaxValueValidator(INT64_MAX)))
        return field

    def formfield_for_foreignkey(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("form_class", BoundedModelChoiceField)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("form_class", BoundedModelMultipleChoiceField)
        return super().formfield_for_manytomany(db_field, request, **kwargs)
