"""Queue the analysis worker's tasks by name, from processes that do not run them.

Layer: Celery glue. The web processes (the admin's WARC export action) and every Django
process (link analysis is asked for when a crawl's documents are complete, see
``CrawlerConfig.ready``) queue these, but only the ``analysis`` worker runs them. Sending by
task name (``send_task``) keeps those processes from importing :mod:`crawler.tasks`, whose
task bodies pull in the fetcher, page processing and the index writer: about 0.2 s more at
the start of every web process and management command, for nothing they use.

The names are the ones :mod:`crawler.tasks` registers; a test checks they match.
"""

from __future__ import annotations

from celery import current_app

ANALYSIS_QUEUE = "analysis"
LINK_ANALYSIS_TASK = "crawler.link_analysis"
EXPORT_WARC_TASK = "crawler.export_warc"
# the broker unreachable: give up after about a second, so the caller can say so
_RETRY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.4, "interval_max": 0.5}


def send_link_analysis(crawl_id: int) -> None:
    """Queue a link analysis run of crawl ``crawl_id``; raises when the broker cannot be
    reached."""
    current_app.send_task(LINK_ANALYSIS_TASK, args=[int(crawl_id)], queue=ANALYSIS_QUEUE,
                          retry=True, retry_policy=_RETRY, ignore_result=True)


def send_export_warc(crawl_id: int) -> None:
    """Queue a WARC export of crawl ``crawl_id``; raises when the broker cannot be reached."""
    current_app.send_task(EXPORT_WARC_TASK, args=[int(crawl_id)], queue=ANALYSIS_QUEUE,
                          retry=True, retry_policy=_RETRY, ignore_result=True)
