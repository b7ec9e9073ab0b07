"""The crawl's link scores for fetchers on machines without a queue server (issue 35, item 2).

Layer: Django glue (settings, the queue-server rows), used by :mod:`crawler.machines.fetching`.

How a fetcher gets its configuration: the crawl's settings from the shared database, and from
its queue server, with every schedule message (``crawler.machines.queue_server``): the urls,
the hosts' last requests and the hosts to skip. The scores file is delivered the same way, by
reference, since it is too large for every message (56 bytes a url): a message names the
version of the file its queue server holds (``scores``: :attr:`LinkScores.version
<indexer.core.signals.link_scores.LinkScores.version>`, a fresh random value each time the
analysis writes the file), and a fetcher whose machine holds another version, or none, asks
that queue server for the file (``GET api/shard/scores?crawl=TS``, ``linkgraph.views``) at the
url the queue server registered with its signed heartbeat (the rows a search trusts with the
shard token), with the shard token, and installs it as the analysis's push does
(:func:`~indexer.core.signals.link_scores.receive_scores`: checked, then renamed over
``<WORK_DIRECTORY>/linkgraph/<ts>/scores.npz``), where the fetcher's link ordering reads it.

On one machine and on a queue server's machine the file is already there, of the announced
version: nothing travels. A delivery never fails the schedule it came with. Fetcher processes of one machine take turns through a lock file, so
one of them downloads a new version and the others find it installed. A download that fails
is logged and tried again for the same version RETRY_SECONDS later at the soonest; the fetcher
meanwhile orders links with the file it has (or without one).
"""

from __future__ import annotations

import fcntl
import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import DatabaseError

from crawler.selectors import registered_queue_servers
from indexer.core.errors import CorruptGraphError
from indexer.core.runtime.workdir import scores_path
from indexer.core.shard_token import TOKEN_HEADER, shard_bearer
from indexer.core.signals.link_scores import receive_scores
from linkgraph.core.remote import SCORES_PATH

logger = logging.getLogger(__name__)

RETRY_SECONDS = 60.0
TIMEOUT_SECONDS = 120.0


class ScoreDeliveryError(Exception):
    """The scores file could not be fetched from its queue server (the message says why)."""


def registered_url(server: int) -> str | None:
    """The url queue server ``server`` registered with its signed heartbeat, if it is live."""
    for row in registered_queue_servers():
        if row.server_id == server and row.base_url:
            return str(row.base_url)
    return None


def file_version(path: Path) -> str | None:
    """The ``version`` in the meta of the scores file at ``path`` (``np.load`` reads only the
    members asked for: the meta, not the scores), None without a readable file or a version."""
    try:
        with np.load(path, allow_pickle=False) as data:
            version = json.loads(str(data["meta"])).get("version")
    except (OSError, KeyError, ValueError, AttributeError, EOFError, zipfile.BadZipFile):
        return None
    return None if version is None else str(version)


@contextmanager
def _turn(path: Path) -> Iterator[None]:
    """Hold the machine's lock of the scores file at ``path`` (one download at a time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class ScoreDelivery:
    """Brings the scores file a schedule message announces onto this machine (see the
    module). ``locate(server)`` gives a queue server's url (default :func:`registered_url`),
    ``opener`` opens a request (``urllib.request.urlopen``)."""

    def __init__(self, locate: Callable[[int], str | None] = registered_url,
                 opener: Callable[..., Any] = urllib.request.urlopen,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._locate = locate
        self._open = opener
        self._clock = clock
        self._failed: dict[tuple[int, str], float] = {}
        self._seen: dict[Path, tuple[tuple[int, int], str | None]] = {}

    def _version_here(self, path: Path) -> str | None:
        """The version of the file at ``path``, read again only when the file changed."""
        try:
            stat = path.stat()
        except OSError:
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        kept = self._seen.get(path)
        if kept is None or kept[0] != key:
            kept = self._seen[path] = (key, file_version(path))
        return kept[1]

    def ensure(self, crawl: int, server: int, version: Any) -> str:
        """Make this machine's scores file of crawl ``crawl`` the ``version`` queue server
        ``server`` announced. Returns what happened: ``none`` (nothing announced), ``here``
        (already installed), ``later`` (a recent try failed), ``installed`` or ``failed``."""
        if not isinstance(version, str) or not version:
            return "none"
        path = scores_path(settings.WORK_DIRECTORY, crawl)
        if self._version_here(path) == version:
            return "here"
        failed = self._failed.get((crawl, version))
        if failed is not None and self._clock() - failed < RETRY_SECONDS:
            return "later"
        try:  # never the schedule's failure: without the file, links keep the older order
            with _turn(path):
                if self._version_here(path) == version:
                    return "here"  # another fetcher process of this machine brought it
                urls = self._download(crawl, server, path)
        except (ScoreDeliveryError, OSError) as exc:
            self._failed[(crawl, version)] = self._clock()
            logger.warning("link scores of crawl %s (version %s) not fetched: %s; links are "
                           "ordered with the file this machine has", crawl, version, exc)
            return "failed"
        self._failed.pop((crawl, version), None)
        logger.info("link scores of crawl %s fetched from queue server %s: %d urls at %s",
                    crawl, server, urls, path)
        return "installed"

    def _download(self, crawl: int, server: int, path: Path) -> int:
        try:
            base = self._locate(server)
        except DatabaseError as exc:
            raise ScoreDeliveryError(f"the queue servers' rows cannot be read: {exc}") from exc
        if not base:
            raise ScoreDeliveryError(f"queue server {server} is not registered as live")
        url = urllib.parse.urljoin(base.rstrip("/") + "/", SCORES_PATH) + \
            "?" + urllib.parse.urlencode({"crawl": int(crawl)})
        request = urllib.request.Request(url, headers={
            TOKEN_HEADER: shard_bearer(str(settings.QUEUE_SERVER_TOKEN))})
        try:
            with self._open(request, timeout=TIMEOUT_SECONDS) as response:
                length = int(response.headers.get("Content-Length") or -1)
                if length <= 0:
                    raise ScoreDeliveryError(f"{base} sent no Content-Length")
                return receive_scores(response.read, length, path, crawl)
        except urllib.error.HTTPError as exc:
            raise ScoreDeliveryError(f"{base} answered {exc.code}") from exc
        except CorruptGraphError as exc:
            raise ScoreDeliveryError(f"{base} sent an unusable file: {exc.reason}") from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ScoreDeliveryError(f"{base} cannot be reached: {exc}") from exc
