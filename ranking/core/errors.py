"""Errors of the query side.

Layer: ``ranking.core``. The glue (views, the shard API) turns them into messages and status
codes; ``core`` raises and never swallows.
"""

from __future__ import annotations


class SearchError(Exception):
    """Base class of query-side errors."""


class NoIndexError(SearchError):
    """There is no index to search (none built yet, or the requested crawl is missing)."""


class ShardError(SearchError):
    """A shard (queue server) failed to answer, answered badly, or answered too late."""

    def __init__(self, shard: str, reason: str) -> None:
        super().__init__(f"{shard}: {reason}")
        self.shard = shard
        self.reason = reason
