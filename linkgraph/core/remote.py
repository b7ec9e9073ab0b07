"""A queue server's shard on another machine, as a :class:`.analysis.ShardSource`: its link
records come over HTTP and the crawl's scores file is pushed back to it.

Layer: ``linkgraph.core`` (pure Python, :mod:`urllib`). The server side is
``linkgraph.views`` (``shard_links`` and ``shard_scores``); both check the shared queue-server
token (:mod:`indexer.core.shard_token`), as the shard search endpoints do.

* ``GET <base>api/shard/links?crawl=TS&server=N`` -> the shard's link records in the
  ``linkrecords`` format (:mod:`.transfer`); 404 when that queue server has no bundle of the
  crawl (it received no documents): an empty shard, not an error.
* ``POST <base>api/shard/scores?crawl=TS`` with the ``scores.npz`` bytes as the body -> the
  queue server checks the file and renames it into ``<its work>/linkgraph/<ts>/scores.npz``.

Why push rather than let queue servers pull: the machine that computed the scores knows the
moment a new file exists and which shards need it, so the file is in place when the run ends
(the admin's "ok" means every shard has it) and no queue server polls anything; a shard that
was down at that moment is reported in the run, and the next run pushes again.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from indexer.core.errors import LinkGraphError
from indexer.core.shard_token import TOKEN_HEADER

from .bundles import ShardLinks
from .transfer import CONTENT_TYPE, TransferError, decode_shard_links

LINKS_PATH = "api/shard/links"
SCORES_PATH = "api/shard/scores"


class RemoteShardError(LinkGraphError):
    """A remote queue server could not be read from or written to (the message names it)."""


@dataclass(frozen=True, slots=True)
class RemoteShard:
    """Queue server ``server`` of crawl ``crawl``, reached at ``base_url`` (the web endpoint
    it registers with its heartbeats): a :class:`.analysis.ShardSource`."""

    server: int
    base_url: str
    token: str
    crawl: int
    timeout: float = 60.0

    @property
    def location(self) -> str:
        return self.base_url

    def _url(self, path: str) -> str:
        query = urllib.parse.urlencode({"crawl": int(self.crawl), "server": self.server})
        return urllib.parse.urljoin(self.base_url.rstrip("/") + "/", path) + "?" + query

    def estimate_documents(self) -> int:
        return 0  # unknown until the stream has been read

    def read_links(self, progress: Callable[[int], None], start: int) -> ShardLinks:
        """The shard's link records (empty when it has no bundle of the crawl)."""
        request = urllib.request.Request(self._url(LINKS_PATH), headers={
            TOKEN_HEADER: self.token, "Accept": CONTENT_TYPE})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                shard = decode_shard_links(response, self.crawl)
        except TransferError as exc:
            raise RemoteShardError(f"queue server {self.server} at {self.base_url} sent bad "
                                   f"link records: {exc}") from exc
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return ShardLinks()
            raise RemoteShardError(f"queue server {self.server} at {self.base_url} answered "
                                   f"{exc.code} for its link records: {_reason(exc)}") from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise RemoteShardError(f"queue server {self.server} at {self.base_url} cannot be "
                                   f"reached for its link records: {exc}") from exc
        progress(start + shard.documents)
        return shard

    def publish_scores(self, path: Path, crawl: int) -> str:
        """POST the scores file; returns a note for the run's report."""
        size = os.path.getsize(path)
        with open(path, "rb") as body:
            request = urllib.request.Request(
                self._url(SCORES_PATH), data=body, method="POST",
                headers={TOKEN_HEADER: self.token, "Content-Type": "application/octet-stream",
                         "Content-Length": str(size)})
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    answer = json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as exc:
                raise RemoteShardError(f"queue server {self.server} at {self.base_url} "
                                       f"refused the scores file ({exc.code}): "
                                       f"{_reason(exc)}") from exc
            except (urllib.error.URLError, OSError, ValueError) as exc:
                raise RemoteShardError(f"the scores file could not be sent to queue server "
                                       f"{self.server} at {self.base_url}: {exc}") from exc
        return f"pushed {size} bytes to {self.base_url} ({answer.get('urls', '?')} urls)"


def _reason(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read() or b"{}")
    except (ValueError, OSError):
        return str(exc.reason)
    return str(body.get("error") or exc.reason) if isinstance(body, dict) else str(exc.reason)
