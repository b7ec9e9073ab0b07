"""robots.txt failures by kind (issue 18): which answers count, the sum of several queue
servers' reports, the table rows and the reason a crawl with nothing indexed gives."""

from __future__ import annotations

from crawler.core.queue_server.robots_failures import RobotsFailures, end_reason, merge, rows


def test_only_answers_that_disallow_a_host_for_failing_count():
    failures = RobotsFailures()
    assert failures.record("https://a.example/robots.txt", 200) is None
    assert failures.record("https://b.example/robots.txt", 404) is None
    assert failures.record("https://c.example/robots.txt", 0, "dns", "no such host") == "dns"
    assert failures.record("https://d.example/robots.txt", 503) == "http_503"
    assert failures.record("https://e.example/robots.txt", 0, "dns", "timeout") == "dns"
    assert failures.to_json() == {"fetches": 5, "failed": 3, "kinds": {
        "dns": {"count": 2, "url": "https://c.example/robots.txt", "message": "no such host"},
        "http_503": {"count": 1, "url": "https://d.example/robots.txt",
                     "message": "answered HTTP 503"}}}
    assert RobotsFailures.from_json(failures.to_json()) == failures
    assert rows(failures.to_json())[1]["label"] == "HTTP 503"


def test_reports_sum_and_malformed_ones_count_as_nothing():
    one, two = RobotsFailures(), RobotsFailures()
    one.record("https://a.example/robots.txt", 0, "tls", "bad certificate")
    two.record("https://b.example/robots.txt", 0, "tls", "handshake failed")
    two.record("https://c.example/robots.txt", 200)
    total = merge([one.to_json(), None, {"kinds": "garbage"}, two.to_json()])
    assert total == {"fetches": 3, "failed": 2, "kinds": {"tls": {
        "count": 2, "url": "https://a.example/robots.txt", "message": "bad certificate"}}}


def test_end_reason_only_when_nothing_was_indexed_because_of_failures():
    failures = RobotsFailures()
    failures.record("https://a.example/robots.txt", 0, "connection", "reset")
    failures.record("https://b.example/robots.txt", 0, "tls", "bad certificate")
    failures.record("https://c.example/robots.txt", 0, "connection", "refused")
    report = failures.to_json()
    assert end_reason(0, report) == (
        "every robots.txt fetch failed: 3 hosts, connection refused or reset (example: "
        "https://a.example/robots.txt: reset); TLS error (example: "
        "https://b.example/robots.txt: bad certificate)")
    assert end_reason(5, report) == ""
    failures.record("https://d.example/robots.txt", 200)
    assert end_reason(0, failures.to_json()).startswith(
        "nothing was indexed; 3 of 4 robots.txt fetches failed: 3 hosts, ")
    assert end_reason(0, {}) == "" and end_reason(0, RobotsFailures().to_json()) == ""
