"""Reuse (issue 19, item 5): a new crawl from an old one (seeds, sites and options), and a
duplicated Page Options profile, through the admin's actions."""

from __future__ import annotations

import pytest
from django.urls import reverse

from crawler import services
from crawler.models import Crawl, PageOptions, Scraper

pytestmark = pytest.mark.django_db


def test_new_crawl_from_an_ended_one_copies_its_setup(admin_client, make_crawl):
    old = make_crawl(name="docs", seeds=("https://a.example/", "https://b.example/"),
                     max_pages=250, max_depth=4, allowed_sites="domain:example.com",
                     restrict_to_seeds=True, needy_threshold=0.25)
    old.seeds.filter(url="https://b.example/").update(policy="distrust", trust_weight=3.0)
    services.crawl_start(old.pk)
    services.crawl_stop(old.pk)
    response = admin_client.post(reverse("admin:crawler_crawl_changelist"), {
        "action": "new_crawl_from", "_selected_action": [old.pk]})
    copy = Crawl.objects.exclude(pk=old.pk).get()
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:crawler_crawl_change", args=[copy.pk])
    assert copy.name == "docs (copy)" and copy.status == "new"
    assert copy.timestamp != old.timestamp and copy.pages_fetched == 0
    for field in ("max_pages", "max_depth", "allowed_sites", "restrict_to_seeds",
                  "needy_threshold", "page_options_id", "order"):
        assert getattr(copy, field) == getattr(old, field), field
    assert sorted(copy.seeds.values_list("url", "policy", "trust_weight")) == [
        ("https://a.example/", "default", 1.0), ("https://b.example/", "distrust", 3.0)]
    services.crawl_start(copy.pk)  # it runs as the original did
    assert services.crawl_copy(old.pk).name == "docs (copy 2)"


def test_duplicate_page_options_with_scrapers(admin_client):
    default = services.page_options_default_get()
    scraper = Scraper.objects.create(name="wiki", signature="//div[@id='content']")
    default.scrapers.add(scraper)
    PageOptions.objects.filter(pk=default.pk).update(byte_range=123_456, results_per_page=20)
    admin_client.post(reverse("admin:crawler_pageoptions_changelist"), {
        "action": "duplicate_options", "_selected_action": [default.pk]})
    copy = PageOptions.objects.get(name=f"{default.name} (copy)")
    assert not copy.is_default
    assert copy.byte_range == 123_456 and copy.results_per_page == 20
    assert list(copy.scrapers.all()) == [scraper]
    assert PageOptions.objects.get(pk=default.pk).is_default
