"""``/indexed``, "Is my site indexed?" (issue 38, item 4): a url's state from the index and the
crawler's rows, submissions behind a signed question and a rate limit, the operator's
approval into the running crawl."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from crawler.models import Crawl, RefusedUrl, SeedSite, SubmissionStatus, UrlSubmission
from crawler.models.crawls import CrawlStatus
from crawler.submissions import submission_create, submissions_approve
from operations.challenge import challenge_check, challenge_new
from tests.web.hardening_index import build_index

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def indexed(search_work, settings):
    build_index(search_work, {"https://indexed.example/page.html":
                              "<html><head><title>Indexed page</title></head><body><p>text"
                              "</p></body></html>"})
    return search_work


def answer(page: str) -> dict[str, str]:
    """The submit form's fields, the question answered."""
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    a, b = map(int, re.search(r"what is (\d+) \+ (\d+)\?", page).groups())
    return {"token": token, "answer": str(a + b)}


def test_an_indexed_page_says_so_with_its_crawl_date(client, indexed):
    page = client.get("/indexed", {"url": "https://indexed.example/page.html"})
    text = page.content.decode()
    assert page.status_code == 200 and 'data-state="indexed"' in text
    assert re.search(r'id="state-date">\d{4}-\d\d-\d\d \d\d:\d\d UTC', text)
    assert "not scheduled" in text  # no crawl row: no recrawl period known
    assert 'id="submit-form"' not in text


def test_an_unknown_url_is_submitted_after_the_question(client, indexed, settings):
    settings.CRAWLER_ALLOWED_NETWORKS = ("public",)
    url = "https://127.0.0.1/new.html"
    first = client.get("/indexed", {"url": url}).content.decode()
    assert 'data-state="unknown"' in first and 'id="submit-form"' in first
    wrong = client.post("/indexed", {"url": url, **answer(first), "answer": "-1"})
    assert wrong.status_code == 400 and not UrlSubmission.objects.exists()
    fields = answer(first)
    done = client.post("/indexed", {"url": url, **fields})
    assert done.status_code == 303 and "submitted=1" in done["Location"]
    shown = client.get(done["Location"]).content.decode()
    # loopback is outside the default egress allow-list (public addresses only)
    assert 'data-state="refused"' in shown and "egress" in shown
    assert client.post("/indexed", {"url": url, **fields}).status_code == 400  # used up
    settings.CRAWLER_ALLOWED_NETWORKS = ("127.0.0.0/8",)
    url = "https://127.0.0.1/other.html"
    page = client.get("/indexed", {"url": url}).content.decode()
    client.post("/indexed", {"url": url, **answer(page)})
    assert 'data-state="pending"' in client.get("/indexed", {"url": url}).content.decode()


def test_approval_makes_a_seed_of_the_running_crawl(make_crawl, settings):
    settings.CRAWLER_ALLOWED_NETWORKS = ("127.0.0.0/8",)
    submission = submission_create("127.0.0.1/a.html", "203.0.113.5")
    assert submission.status == SubmissionStatus.PENDING and submission.url == \
        "https://127.0.0.1/a.html" and "203.0.113.5" not in submission.client
    with pytest.raises(ValueError, match="No crawl is running"):
        submissions_approve([submission.pk])
    crawl = make_crawl()
    Crawl.objects.filter(pk=crawl.pk).update(status=CrawlStatus.RUNNING)
    assert submissions_approve([submission.pk]) == 1
    assert SeedSite.objects.filter(crawl=crawl, url="https://127.0.0.1/a.html").exists()
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.APPROVED and submission.crawl_id == crawl.pk


def test_the_crawlers_refusal_reason_is_shown(client, make_crawl, search_work):
    crawl = make_crawl()
    RefusedUrl.objects.create(crawl=crawl, url="https://blocked.example/x", origin=
                              "https://blocked.example", reason="robots", detail="",
                              refused_at=datetime(2026, 1, 2, tzinfo=UTC))
    text = client.get("/indexed", {"url": "https://blocked.example/x"}).content.decode()
    assert 'data-state="refused"' in text and "robots.txt disallows it" in text


def test_admin_approves_and_declines(admin_client, make_crawl, settings):
    settings.CRAWLER_ALLOWED_NETWORKS = ("127.0.0.0/8",)
    a = submission_create("https://127.0.0.1/a", "198.51.100.1")
    b = submission_create("https://127.0.0.1/b", "198.51.100.1")
    crawl = make_crawl()
    Crawl.objects.filter(pk=crawl.pk).update(status=CrawlStatus.RUNNING)
    changelist = reverse("admin:crawler_urlsubmission_changelist")
    assert "https://127.0.0.1/a" in admin_client.get(changelist).content.decode()
    admin_client.post(changelist, {"action": "approve", "_selected_action": [a.pk]})
    admin_client.post(changelist, {"action": "decline", "_selected_action": [b.pk]})
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.status, b.status) == (SubmissionStatus.APPROVED, SubmissionStatus.DECLINED)
    assert b.decided_at <= timezone.now()


def test_rate_limit_and_odd_input(client, search_work, settings):
    settings.SUBMISSIONS_PER_CLIENT_PER_HOUR = 3
    assert client.get("/indexed").status_code == 200
    assert client.get("/indexed", {"url": "javascript:alert(1)"}).status_code == 400
    assert client.get("/indexed", {"url": "x" * 5000}).status_code == 400
    assert client.post("/indexed", {"url": "https://a.example/", "token": "forged",
                                    "answer": "x"}).status_code == 400
    assert client.get("/indexed", {"url": "https://a.example/"}).status_code == 429
    assert client.put("/indexed").status_code == 405


def test_challenge_tokens():
    question, token = challenge_new()
    a, b = map(int, question.split(" + "))
    assert challenge_check(token, "nope") == "the answer must be a number"
    assert challenge_check(token, str(a + b + 1)) == "that is not the sum"
    assert challenge_check(token + "x", str(a + b)).startswith("the question's token")
    assert challenge_check(token, str(a + b)) == ""
    assert "answered already" in challenge_check(token, str(a + b))
    assert "expired" in challenge_check(challenge_new()[1], "0", max_age=-1)
