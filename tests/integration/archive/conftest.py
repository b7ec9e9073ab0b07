import pytest


@pytest.fixture
def work(search_work):
    """The engine's work directory for one test; the search page reads the indexes in it."""
    return search_work
