"""Glue of the Page Options "Test" tool: the form, and the fetch through the crawler's own
fetch code and egress rules (settings), before ``crawler.core.processing.page_test`` runs the steps."""

from __future__ import annotations

import time
from dataclasses import replace

from django import forms
from django.conf import settings

from classifiers.selectors import trained_classifiers_get
from crawler.core.definition.seeds import SeedUrlError, canonical_seed_url
from crawler.core.http import FetchConfig, Fetcher
from crawler.core.processing import mime
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.page_test import PageTestReport, run_page_test
from crawler.machines.fetching import indexing_plugins
from crawler.machines.own_endpoints import engine_endpoints
from crawler.models import PageOptions
from crawler.selectors import crawl_time_options_from, page_options_snapshot

MIME_CHOICES = [
    ("", "Detect from the headers and the content"),
    (mime.HTML, "HTML"), (mime.PLAIN, "Plain text"), (mime.SITEMAP, "XML sitemap"),
    (mime.ROBOTS, "robots.txt"), (mime.RSS, "RSS feed"), (mime.ATOM, "Atom feed"),
    (mime.PDF, "PDF"),
]


class PageTestForm(forms.Form):
    url = forms.CharField(required=False, max_length=2048, label="Url to fetch",
                          help_text="Fetched with the crawler's own code and egress rules.")
    upload = forms.FileField(required=False, label="Or upload a file",
                             help_text="Read up to the byte range.")
    text = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 8}),
                           label="Or paste the page")
    page_url = forms.CharField(required=False, max_length=2048,
                               label="Url the upload or text stands for",
                               initial="https://example.com/test.html")
    mime_type = forms.ChoiceField(choices=MIME_CHOICES, required=False, label="MIME type")

    def clean(self) -> dict:
        data = super().clean()
        given = [bool(data.get("url")), bool(data.get("upload")), bool(data.get("text"))]
        if sum(given) != 1:
            raise forms.ValidationError("Give exactly one of: a url, a file or pasted text.")
        for name in ("url", "page_url"):
            if data.get(name):
                try:
                    data[name] = canonical_seed_url(data[name])
                except SeedUrlError as exc:
                    self.add_error(name, str(exc))
        return data


def processing_config(options: PageOptions) -> PageProcessingConfig:
    crawl_time = crawl_time_options_from(page_options_snapshot(options))
    return PageProcessingConfig.from_options(
        crawl_time, classifiers=trained_classifiers_get(crawl_time.classifiers),
        **indexing_plugins())


def run_test(options: PageOptions, form: PageTestForm) -> tuple[PageTestReport | None, str]:
    """(report, message): the report, or None and why the page could not be had."""
    config = processing_config(options)
    data = form.cleaned_data
    forced = data.get("mime_type") or None
    if data.get("url"):
        fetch = FetchConfig(allowed_networks=tuple(settings.CRAWLER_ALLOWED_NETWORKS),
                            ca_bundle=settings.CRAWLER_CA_BUNDLE,
                            user_agent=settings.CRAWLER_USER_AGENT,
                            byte_range=config.byte_range, connect_timeout=5.0,
                            read_timeout=10.0, page_deadline=20.0,
                            refused_endpoints=engine_endpoints())
        with Fetcher(fetch) as fetcher:
            result = fetcher.fetch(data["url"])
        if result.error is not None:
            return None, f"Could not fetch {data['url']}: {result.error}"
        page = FetchedPage(url=result.final_url or data["url"], body=result.body,
                           status=result.status, headers=dict(result.headers),
                           fetched_at=time.time(), download_time=result.elapsed,
                           ip=result.ip or "", mime_type=forced)
    else:
        if data.get("upload"):
            body = data["upload"].read(config.byte_range + 1)
        else:
            body = data["text"].encode("utf-8")
        page = FetchedPage(url=data.get("page_url") or "https://example.com/test.html",
                           body=body, fetched_at=time.time(),
                           mime_type=forced or (None if data.get("upload") else mime.HTML))
    return run_page_test(page, replace(config)), ""
