import pytest


@pytest.fixture
def work(search_work, settings):
    """The engine's work directory for one test; the search page reads the indexes in it, and
    archive crawls may read WARC files in it (ARCHIVE_ROOTS)."""
    settings.ARCHIVE_ROOTS = (search_work,)
    return search_work
