"""The query log on its own: what a recorded search keeps, and the per-query aggregates that
needy-query crawling reads (tests/web/test_needy_queries.py covers the search view and the
crawler's side)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from querylog.models import QueryLog
from querylog.selectors import QueryStats, queries_below_relevance
from querylog.services import mean_top, query_log_prune, query_log_record

pytestmark = pytest.mark.django_db


def test_mean_top_counts_missing_results_as_zero():
    assert mean_top([5.0, 1.0, 3.0]) == pytest.approx(0.9)
    assert mean_top([2.0] * 12) == pytest.approx(2.0)


def test_a_record_keeps_the_normalised_query_and_its_best_ten_scores():
    query_log_record("  Threading   LOCKS ", 12, [float(s) for s in range(12)])
    query_log_record("   ", 3, [1.0])  # nothing asked: not logged
    row = QueryLog.objects.get()
    assert (row.query, row.results) == ("threading locks", 12)
    assert row.top_scores == [11.0, 10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0]
    assert row.mean_top_score == pytest.approx(6.5)


def test_a_query_with_nul_is_logged_without_it_and_the_transaction_goes_on():
    """PostgreSQL refuses NUL in text: the row was refused and, inside a transaction, every
    later query failed (a fuzzed search page then logged tracebacks until memory ran out)."""
    query_log_record("\x00secret\x00 word", 1, [1.0])
    query_log_record("next", 1, [1.0])
    assert sorted(QueryLog.objects.values_list("query", flat=True)) == ["next", "secret word"]


def test_queries_below_relevance_most_frequent_first_within_the_limit():
    for query, score, times in (("b", 0.5, 2), ("a", 0.1, 2), ("c", 0.2, 3), ("good", 9.0, 4)):
        for _ in range(times):
            query_log_record(query, 10, [score * 10])
    since = timezone.now() - timedelta(days=1)
    got = queries_below_relevance(1.0, since, limit=2)
    assert [(q.query, q.frequency) for q in got] == [("c", 3), ("a", 2)]
    assert got[0] == QueryStats("c", 3, pytest.approx(0.2))
    assert queries_below_relevance(1.0, timezone.now() + timedelta(seconds=1), 10) == ()


def test_rows_older_than_the_retention_are_deleted_by_a_later_write(settings):
    """Anonymous searches steer the crawl: the log keeps QUERY_LOG_RETENTION_DAYS of them."""
    from django.core.cache import cache

    settings.QUERY_LOG_RETENTION_DAYS = 30
    for query in ("old one", "old two", "recent"):
        query_log_record(query, 1, [1.0])
    QueryLog.objects.filter(query__startswith="old").update(
        created_at=timezone.now() - timedelta(days=31))
    cache.delete("querylog:pruned")  # the hour's mark is free: the next write prunes
    query_log_record("new", 1, [1.0])
    assert sorted(QueryLog.objects.values_list("query", flat=True)) == ["new", "recent"]
    settings.QUERY_LOG_RETENTION_DAYS = 0
    QueryLog.objects.update(created_at=timezone.now() - timedelta(days=3650))
    assert query_log_prune() == 0 and QueryLog.objects.count() == 2  # 0 keeps every row


def test_one_client_adds_a_bounded_number_of_rows_a_minute(client, settings, tmp_path):
    """Through the search page: the client's address bounds what it adds to the log; another
    address still logs."""
    settings.WORK_DIRECTORY = tmp_path  # no index: every search has no results
    settings.QUERY_LOG_PER_CLIENT_PER_MINUTE = 3
    minutes = {int(time.time() // 60)}
    for i in range(6):
        assert client.get("/", {"q": f"flood {i}", "f": "json"},
                          REMOTE_ADDR="192.0.2.7").status_code == 200
    minutes.add(int(time.time() // 60))
    client.get("/", {"q": "someone else", "f": "json"}, REMOTE_ADDR="192.0.2.8")
    logged = set(QueryLog.objects.values_list("query", flat=True))
    assert len({q for q in logged if q.startswith("flood")}) <= 3 * len(minutes)
    assert "someone else" in logged
