"""The link-analysis app's one model: the state of each crawl's link analysis.

Layer: Django glue. The crawl it belongs to is named by the string ``"crawler.Crawl"``: the
row points at the crawler's model, and this app imports nothing of the crawler.
"""

from __future__ import annotations

from django.db import models


class LinkAnalysis(models.Model):
    """The link analysis of one crawl (seed 002's WebGraph, Loops, LinkRank and ScoreUpdater,
    run by the engine itself): the lock that keeps two runs of a crawl apart, the progress of
    the running one and what the last one did. Written only by
    :mod:`linkgraph.services`.

    ``state``: ``idle`` (nothing to do), ``queued`` (a run was asked for and not started yet),
    ``running``; ``rerun`` is set when a run is asked for while one runs: the running one then
    queues exactly one follow-up when it ends, however many requests came in meanwhile.
    """

    class State(models.TextChoices):
        IDLE = "idle", "Idle"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"

    class Outcome(models.TextChoices):
        NONE = "", "Never run"
        OK = "ok", "OK"
        FAILED = "failed", "Failed"

    crawl = models.OneToOneField("crawler.Crawl", on_delete=models.CASCADE,
                                 related_name="link_analysis")
    state = models.CharField(max_length=10, choices=State.choices, default=State.IDLE)
    rerun = models.BooleanField(default=False)
    reason = models.CharField(max_length=100, blank=True)  # why the pending/current run
    requested_at = models.DateTimeField(null=True, blank=True)
    pages_at_request = models.BigIntegerField(default=0)  # the crawl's pages_fetched then
    # the running run
    run_started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    stage = models.CharField(max_length=20, blank=True)
    stage_done = models.BigIntegerField(default=0)
    stage_total = models.BigIntegerField(default=0)
    # the last run that ended
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(null=True, blank=True)
    last_outcome = models.CharField(max_length=10, choices=Outcome.choices, blank=True,
                                    default=Outcome.NONE)
    last_error = models.TextField(blank=True)
    last_pages = models.BigIntegerField(default=0)
    last_urls = models.BigIntegerField(default=0)
    last_edges = models.BigIntegerField(default=0)
    last_seconds = models.FloatField(default=0.0)
    last_shards = models.JSONField(default=list, blank=True)
    runs = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "crawler_linkanalysis"  # created by the crawler app, moved here with its rows

    def __str__(self) -> str:
        return f"link analysis of {self.crawl}"
