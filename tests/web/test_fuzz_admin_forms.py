"""Issue 34: generated values posted to every admin add and change form of the project's own
models, and odd query strings on their change lists, never get a server error. Fixed seed; the
forms are the admin's own (their initial data, as a browser would post it back), each post
changing one to three fields to a hostile value: empty, huge, control characters, NUL, numbers
out of range, wrong types, odd urls, regular expressions RE2 refuses, XPath lxml refuses, text
that is not JSON, unknown choices. A refused form must come back with its errors (200) or a
clean 4xx; a saved one redirects."""

from __future__ import annotations

import contextlib
import random

import pytest
from django.contrib import admin
from django.urls import NoReverseMatch, reverse

from crawler.models import Crawl, Scraper
from tests.web.forms import admin_change_data

pytestmark = pytest.mark.django_db

SEED = 20261128
POSTS = 500  # with the search side's 2,400 (test_fuzz_endpoints): nearly 3,000 generated requests
APPS = {"crawler", "classifiers", "searchindex", "linkgraph", "ranking", "operations",
        "querylog", "indexer"}
HOSTILE = (
    "", " ", "\x00", "a\x00b", "\u202e", "x" * 70_000, "9" * 400,
    "-1", "-99999999999999999999", "1e309", "nan", "inf", "0x10", "１７", "3.5", "true",
    "[", "{", '{"a": 1, "a": 2}', "null", "[1, 2", "(?P<x", "(a+)+$", "a{99999}", "\\",
    "//*[", "count(//p) >", "//p[@id='x']", "<script>alert(1)</script>", "javascript:alert(1)",
    "http://", "https://[::1", "ftp://example.com/", "http://example.com:99999/",
    "http://exa mple.com/", "//no-scheme", "file:///etc/passwd", "mailto:x@y", "\r\nX: y",
    "../../etc", "%00", "%%", "\t\n\x0b\x0c", "é中\u0301", "\U0001f600" * 50, "on", "off",
    "1", "0", "2147483648", "9223372036854775808", "unknown-choice", "0,1,2", "a,,b",
)
ODD_QUERIES = ("o=999", "o=-1.a", "o=zz", "p=99999", "p=-1", "p=x", "q=%00", "q=" + "x" * 5000,
               "e=1", "all=", "_changelist_filters=%ff", "status__exact=junk",
               "id__gt=abc", "pk__in=1,a", "name__regex=(", "timestamp__lt=1e309")


def _project_admins() -> list[tuple[type, admin.ModelAdmin]]:
    return sorted(((model, model_admin) for model, model_admin in admin.site._registry.items()
                   if model._meta.app_label in APPS),
                  key=lambda item: item[0]._meta.label)


def _form_urls(make_crawl) -> list[str]:
    """Every add page and one change page per model that has a row (rows made for the
    main ones)."""
    crawl = make_crawl()
    Scraper.objects.create(name="fuzz", signature="//meta")
    Crawl.objects.filter(pk=crawl.pk).update(public=True)
    urls = []
    for model, _ in _project_admins():
        meta = model._meta
        with contextlib.suppress(NoReverseMatch):  # a model without an add page
            urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_add"))
        row = model.objects.order_by("pk").first()
        if row is not None:
            urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_change",
                                args=[row.pk]))
    return urls


def _form_page(client, url: str) -> tuple[dict, list[str]] | None:
    """(data a browser would post back, the names of the form's fields), or None when this
    user may not open the form (read-only rows: no add page)."""
    page = client.get(url)
    assert page.status_code < 500, (url, page.status_code)
    if page.status_code != 200 or page.context is None or "adminform" not in page.context:
        return None
    form = page.context["adminform"].form
    return admin_change_data(client, url), list(form.fields)


def test_generated_admin_posts_never_fail(admin_client, make_crawl):
    rng = random.Random(SEED)
    admin_client.raise_request_exception = False  # collect every server error, not the first
    forms = {}
    for url in _form_urls(make_crawl):
        found = _form_page(admin_client, url)
        if found is not None and found[1]:
            forms[url] = found
    assert len(forms) >= 8, sorted(forms)  # crawls, seeds, page options, scrapers, mixes...
    failures = []
    urls = sorted(forms)
    for n in range(POSTS):
        url = urls[n % len(urls)]
        data, fields = forms[url]
        data = dict(data)
        for name in rng.sample(fields, min(len(fields), rng.randint(1, 3))):
            data[name] = rng.choice(HOSTILE)
        response = admin_client.post(url, data)
        status = response.status_code
        if status >= 500:
            failures.append((url, {k: data[k] for k in fields if k in data}, status))
        elif status == 200:
            assert b"errorlist" in response.content or b"errornote" in response.content \
                or response.context is None or "adminform" in response.context, url
        else:
            assert status in (302, 400, 403, 404), (url, status)
    assert not failures, failures[:5]


def test_odd_changelist_queries_never_fail(admin_client, make_crawl):
    make_crawl()
    admin_client.raise_request_exception = False
    failures = []
    for model, _ in _project_admins():
        meta = model._meta
        base = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        for query in ODD_QUERIES:
            response = admin_client.get(f"{base}?{query}")
            if response.status_code >= 500:
                failures.append((base, query, response.status_code))
    assert not failures, failures


def test_integers_past_64_bits_are_form_errors(admin_client, make_crawl):
    """SQLite cannot hold them: a number field's value and a related row's key past 64 bits
    were sent to the database as they were (OverflowError, a server error)."""
    make_crawl()
    url = reverse("admin:crawler_pageoptions_add")
    base = admin_change_data(admin_client, url)
    huge = str(10 ** 40)
    for field, value in (("scrapers", huge), ("max_links_to_extract", huge),
                         ("page_recrawl_days", "-" + huge)):
        response = admin_client.post(url, {**base, "name": f"huge {field}", field: value})
        assert response.status_code == 200, (field, response.status_code)
        assert b"errorlist" in response.content, field
