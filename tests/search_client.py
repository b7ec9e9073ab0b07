"""The search page as a test reads it: through the Django test client, never a 5xx."""

from __future__ import annotations


def results(client, query: str) -> str:
    """The search page's HTML for ``query`` (asserting it answered 200)."""
    response = client.get("/", {"q": query})
    assert response.status_code == 200
    return response.content.decode()
