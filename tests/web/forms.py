"""Posting an admin change form as a browser would."""

from __future__ import annotations

from typing import Any


def _posted(values: dict[str, Any]) -> dict[str, Any]:
    return {k: "on" if v is True else v for k, v in values.items()
            if v is not None and v is not False}


def admin_change_data(client: Any, url: str) -> dict[str, Any]:
    """The data a browser would post back unchanged from the admin change form at ``url``:
    the form's initial values, ticked boxes as ``"on"``, unticked ones and empty values left
    out (the many-to-many ``scrapers`` too), and each inline's management form and rows as
    they stand."""
    page = client.get(url)
    initial = page.context["adminform"].form.initial
    data = {k: v for k, v in _posted(initial).items() if k != "scrapers"}
    for inline in page.context.get("inline_admin_formsets", ()):
        formset = inline.formset
        management = {**formset.management_form.initial, "TOTAL_FORMS": len(formset.initial_forms)}
        data.update({f"{formset.prefix}-{k}": v for k, v in management.items()})
        for form in formset.initial_forms:
            values = {**form.initial, "id": form.instance.pk}
            data.update({f"{form.prefix}-{k}": v for k, v in _posted(values).items()
                         if k in form.fields})
    return data
