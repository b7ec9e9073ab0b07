"""Urls the public submitted on the "Is my site indexed?" page (issue 38, item 4), and what
the operator decided about them (:mod:`crawler.submissions`)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class SubmissionStatus(models.TextChoices):
    PENDING = "pending", _("awaiting review")
    APPROVED = "approved", _("approved: added to a crawl")
    DECLINED = "declined", _("declined")
    REFUSED = "refused", _("refused")


class UrlSubmission(models.Model):
    """One submitted url. ``client`` is a keyed hash of the submitter's address (for the rate
    limit and to tell repeat submitters apart, never the address itself); ``crawl`` is the
    crawl an approval added it to as a seed; ``reason`` why it was refused at once (egress
    policy, robots.txt as last read, a url the crawler cannot fetch)."""

    url = models.TextField()
    origin = models.CharField(max_length=300, db_index=True)
    client = models.CharField(max_length=64, blank=True)
    submitted_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=10, choices=SubmissionStatus.choices,
                              default=SubmissionStatus.PENDING)
    reason = models.CharField(max_length=300, blank=True)
    crawl = models.ForeignKey("crawler.Crawl", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-submitted_at", "-pk"]
        indexes = [models.Index(fields=["status", "submitted_at"], name="submission_status")]
        verbose_name = _("url submission")

    def __str__(self) -> str:
        return self.url
