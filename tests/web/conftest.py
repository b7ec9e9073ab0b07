import pytest

from crawler import services
from crawler.models import Crawl, SeedSite


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
