"""Field helpers shared by the crawler's models: choices from an enum with their labels, and a
range of allowed values as validators."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator


def enum_choices(enum_cls, labels: dict[str, str]) -> list[tuple[str, str]]:
    """The choices of a field holding ``enum_cls`` values, labelled by ``labels``."""
    return [(member.value, labels[member.value]) for member in enum_cls]


def in_range(low, high) -> list:
    """Validators of a number between ``low`` and ``high``, both included."""
    return [MinValueValidator(low), MaxValueValidator(high)]
