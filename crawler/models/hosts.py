"""Rows of what a crawl did with its urls and hosts, and the operator's host overrides
(part of ``crawler.models``).

Layer: Django glue. The queue servers write the first four in bulk after each round of batches
(``crawler.hosts.activity``); the admin reads them (``crawler.hosts.selectors``,
``crawler.admin.hosts``) and writes :class:`HostOverride`, which the owning queue server polls
and applies to its crawl queue. Every list is read newest first or in key order with keyset
pagination, on the indexes below, so a page costs the same at a million rows.

Retention (settings): the newest ``HOST_LOG_FETCHED_KEEP`` fetched-url rows per crawl and the
newest ``HOST_LOG_REFUSED_KEEP`` refused urls per crawl and reason are kept (older ones are
deleted every ``HOST_LOG_TRIM_SECONDS``); refusal counts and host rows are kept whole (one row
per reason and queue server, one per host). All go with their crawl.
"""

from __future__ import annotations

from django.db import models


class FetchedUrl(models.Model):
    """One download of a crawl (a fetcher's fetch log row)."""

    crawl = models.ForeignKey("crawler.Crawl", on_delete=models.CASCADE, db_index=False,
                              related_name="+")
    url = models.TextField()
    origin = models.CharField(max_length=300)
    status = models.PositiveIntegerField(help_text="HTTP status; 0: no answer")
    size = models.PositiveBigIntegerField("bytes")
    fetched_at = models.DateTimeField()
    error = models.CharField(max_length=40, blank=True, help_text="the fetch error's kind")

    class Meta:
        indexes = [models.Index(fields=["crawl", "id"], name="fetchedurl_crawl_id"),
                   models.Index(fields=["crawl", "origin", "id"],
                                name="fetchedurl_crawl_origin_id")]


class RefusedUrl(models.Model):
    """A url the crawl refused (an example: the newest are kept per reason)."""

    crawl = models.ForeignKey("crawler.Crawl", on_delete=models.CASCADE, db_index=False,
                              related_name="+")
    url = models.TextField()
    origin = models.CharField(max_length=300)
    reason = models.CharField(max_length=20)
    detail = models.CharField(max_length=200, blank=True)
    refused_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["crawl", "reason", "id"],
                                name="refusedurl_crawl_reason_id"),
                   models.Index(fields=["crawl", "origin", "id"],
                                name="refusedurl_crawl_origin_id")]


class RefusalCount(models.Model):
    """How many urls one queue server refused in a crawl for one reason (all of them)."""

    crawl = models.ForeignKey("crawler.Crawl", on_delete=models.CASCADE, related_name="+")
    server = models.PositiveIntegerField()
    reason = models.CharField(max_length=20)
    count = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["crawl", "server", "reason"],
                                               name="refusalcount_unique")]


class RefusedHostCount(models.Model):
    """How many urls of one host one queue server refused in a crawl for one reason (all of
    them; ``origin`` "" for the urls counted without their host, see
    ``crawler.core.queue_server.activity.MAX_REFUSED_HOSTS``)."""

    crawl = models.ForeignKey("crawler.Crawl", on_delete=models.CASCADE, related_name="+")
    server = models.PositiveIntegerField()
    reason = models.CharField(max_length=20)
    origin = models.CharField(max_length=300)
    count = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["crawl", "server", "reason", "origin"],
                                               name="refusedhostcount_unique")]


class CrawlHost(models.Model):
    """One host (origin) of a crawl, as its queue server sees it."""

    crawl = models.ForeignKey("crawler.Crawl", on_delete=models.CASCADE, db_index=False,
                              related_name="+")
    origin = models.CharField(max_length=300)
    server = models.PositiveIntegerField()
    requests = models.PositiveBigIntegerField(default=0)
    errors = models.PositiveBigIntegerField(default=0)
    size = models.PositiveBigIntegerField("bytes", default=0)
    refused = models.PositiveBigIntegerField("refused urls", default=0)
    last_fetch = models.DateTimeField(null=True)
    last_status = models.PositiveIntegerField(null=True)
    robots_status = models.IntegerField(null=True, help_text="null: not read yet")
    robots_text = models.TextField(null=True)
    robots_error = models.CharField(max_length=300, blank=True)
    delay = models.FloatField("delay honoured (s)", default=0.0)
    state = models.CharField(max_length=100, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["crawl", "origin"],
                                               name="crawlhost_unique")]
        indexes = [models.Index(fields=["crawl", "requests", "id"],
                                name="crawlhost_crawl_requests"),
                   models.Index(fields=["crawl", "errors", "id"],
                                name="crawlhost_crawl_errors")]


class HostOverride(models.Model):
    """The operator's override of one host during a crawl: a minimum delay between its
    requests, or exclusion. ``applied_at`` is set by the queue server that applied it."""

    crawl = models.ForeignKey("crawler.Crawl", on_delete=models.CASCADE, related_name="+")
    origin = models.CharField(max_length=300)
    min_delay = models.FloatField("minimum delay (s)", default=0.0)
    excluded = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)
    applied_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["crawl", "origin"],
                                               name="hostoverride_unique")]
