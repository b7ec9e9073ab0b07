"""Posting an admin change form as a browser would."""

from __future__ import annotations

from typing import Any


def admin_change_data(client: Any, url: str) -> dict[str, Any]:
    """The data a browser would post back unchanged from the admin change form at ``url``:
    the form's initial values, ticked boxes as ``"on"``, unticked ones and empty values left
    out (the many-to-many ``scrapers`` too)."""
    page = client.get(url)
    initial = page.context["adminform"].form.initial.items()
    return {k: "on" if v is True else v for k, v in initial
            if v is not None and v is not False and k != "scrapers"}
