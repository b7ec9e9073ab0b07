"""The search view reads the Search Time Page Options at most every SEARCH_OPTIONS_TTL seconds
per process, and a save of Page Options in this process is seen at once."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from crawler import services
from crawler.models import PageOptions
from ranking.search_service import search_service

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    search_service().forget_options()
    yield
    search_service().forget_options()


def _queries_for_options() -> int:
    with CaptureQueriesContext(connection) as ctx:
        search_service().options()
    return len(ctx.captured_queries)


@override_settings(SEARCH_OPTIONS_TTL=60.0)
def test_options_are_read_once_within_the_ttl_and_again_after_a_save():
    profile = services.page_options_default_get()
    assert _queries_for_options() >= 1
    assert _queries_for_options() == 0
    profile.results_per_page = 7
    profile.save()
    assert search_service().options().results_per_page == 7
    assert _queries_for_options() == 0
    PageOptions.objects.filter(pk=profile.pk).update(results_per_page=8)  # no signal
    assert search_service().options().results_per_page == 7  # until the ttl runs out


@override_settings(SEARCH_OPTIONS_TTL=0.0)
def test_ttl_zero_reads_every_time():
    services.page_options_default_get()
    assert _queries_for_options() >= 1
    assert _queries_for_options() >= 1
