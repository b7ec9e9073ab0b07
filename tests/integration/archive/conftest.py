import pytest


@pytest.fixture
def work(tmp_path, settings):
    """The engine's work directory for one test; the search page reads the indexes in it."""
    from ranking.search_service import search_service

    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    settings.SEARCH_OPTIONS_TTL = 0
    yield tmp_path
    search_service().pool.close()
