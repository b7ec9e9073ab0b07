"""The search side's own metrics: how long searches take, by answer format.

Layer: glue of the ``ranking`` app. ``ranking.views`` observes every search; ``/metrics``
(``searchsite.metrics``) exposes the histogram, summed over the web server's worker processes
when ``PROMETHEUS_MULTIPROC_DIR`` is set (``manage.py up`` sets it).
"""

from __future__ import annotations

from prometheus_client import Histogram

SEARCH_SECONDS = Histogram(
    "yioopy_search_seconds", "Time to answer a search, by answer format (html, json, rss).",
    ["format"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
