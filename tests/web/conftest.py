import pytest

from crawler import services
from crawler.models import Crawl, PageOptions, SeedSite
from ranking.search_service import search_service
from tests.web.media_site import build_media_index

# the Page Options rows the migrations seeded, as this worker's first database test saw them
_seeded: list[dict] = []


@pytest.fixture(autouse=True)
def seeded_page_options(request):
    """The Page Options profiles the migrations seed (the default one, "Summary only"), put
    back as they were seeded when missing: a test with ``transaction=True`` (a real crawl in
    this process) empties every table when it ends, and under ``--dist loadfile`` a module
    the same worker runs later would otherwise find none (its searches then use the built-in
    defaults, and "Summary only" is gone)."""
    marker = request.node.get_closest_marker("django_db")
    names = request.fixturenames
    if marker is None and "db" not in names and "transactional_db" not in names:
        return
    transactional = "transactional_db" in names or (
        marker is not None and bool(marker.kwargs.get("transaction")))
    request.getfixturevalue("transactional_db" if transactional else "db")
    if not _seeded:
        _seeded.extend(PageOptions.objects.values())
    present = set(PageOptions.objects.values_list("name", flat=True))
    for row in _seeded:
        if row["name"] not in present:
            PageOptions.objects.create(**row)


@pytest.fixture
def options(db):
    return services.page_options_default_get()


@pytest.fixture
def make_crawl(options):
    def make(name="crawl", seeds=("https://example.com/",), **fields):
        crawl = Crawl.objects.create(name=name, page_options=options, **fields)
        for url in seeds:
            SeedSite.objects.create(crawl=crawl, url=url)
        return crawl

    return make


@pytest.fixture
def media(tmp_path, settings):
    """A bundle of image and video results (:mod:`tests.web.media_site`) as this machine's
    only index."""
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    build_media_index(tmp_path)
    yield tmp_path
    search_service().pool.close()
