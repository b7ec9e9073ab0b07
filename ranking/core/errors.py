"""Errors of the query side.

Layer: ``ranking.core``. The glue (views, the shard API) turns them into messages and status
codes; ``core`` raises and never swallows. What an answer says of an error goes through
:func:`public_reason`: no answer names a file by its absolute path on the server.
"""

from __future__ import annotations

import re

# an absolute file path (not a url's path: no word character, ':' or '/' just before it)
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~-])/(?:[^\s/:'\"]+/)+([^\s/:'\"]*)")


def public_reason(error: BaseException | str) -> str:
    """What an answer may say of ``error``: its text with every absolute path cut to the
    file's name."""
    return _ABSOLUTE_PATH.sub(r"\1", str(error))


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
