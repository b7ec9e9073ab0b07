"""The work-directory layout: where each queue server's crawl files, the link analysis of a
crawl, and the files derived from a bundle live. The one place that knows these names.

Layer: ``indexer.core`` (pure Python), below every app that reads or writes them: the queue
servers (``crawler``), link analysis (``linkgraph``) and search (``ranking``). The glue passes
in the work directory (``settings.WORK_DIRECTORY``); nothing here reads settings. See
``docs/architecture.md`` ("indexer/")::

    <work>/qs<n>/                          queue server n's own directory
        QueueBundle<ts>/                   the crawl queue of crawl ts (crawler.core.scheduler)
        IndexData<ts>/                     its IndexDocumentBundle (indexer.core.bundle.writer)
            phrases.npz                    the shard's common-phrase lexicon
                                           (indexer.core.signals.phrases)
        Inbox<ts>/                         the spool of received batches (crawler.core.transport.spool)
        state<ts>.json                     counters that survive restarts
    <work>/linkgraph/<ts>/
        webgraph/                          the crawl's stored web graph (linkgraph.core.graph)
        scores.npz                         the per-url score file (indexer.core.signals.link_scores)
        near_duplicates.npz                the crawl's near-duplicate clusters
                                           (indexer.core.signals.near_clusters)
    <work>/news/IndexData/                 the news sources' items, one IndexDocumentBundle
                                           (crawler.core.news.index; read by the News tab)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import GraphNotFound

LINKGRAPH_DIR = "linkgraph"
NEWS_DIR = "news"
GRAPH_DIR = "webgraph"
SCORES_FILE = "scores.npz"
NEAR_DUPLICATES_FILE = "near_duplicates.npz"
PHRASES_FILE = "phrases.npz"
_QS = re.compile(r"^qs(\d+)$")
_BUNDLE = re.compile(r"^IndexData(\d+)$")

PathLike = str | os.PathLike[str]


def queue_server_dir(work_dir: PathLike, server: int) -> Path:
    """Queue server ``server``'s own directory."""
    return Path(work_dir) / f"qs{server}"


def news_bundle_path(work_dir: PathLike) -> Path:
    """The news index's IndexDocumentBundle (no crawl timestamp: it is one index, always
    growing; no queue server's, so crawl listings never take it for a crawl)."""
    return Path(work_dir) / NEWS_DIR / "IndexData"


def queue_server_number(name: str) -> int | None:
    """The queue server a directory name (``qs<n>``) belongs to, or None."""
    match = _QS.match(name)
    return int(match.group(1)) if match else None


def bundle_timestamp(name: str) -> int | None:
    """The crawl timestamp of a bundle folder name (``IndexData<ts>``), or None."""
    match = _BUNDLE.match(name)
    return int(match.group(1)) if match else None


def crawl_paths(directory: Path, timestamp: int) -> dict[str, Path]:
    """A queue server's files of crawl ``timestamp`` under its ``directory``: ``queue``,
    ``index`` (the bundle), ``inbox`` and ``state``."""
    return {
        "queue": directory / f"QueueBundle{timestamp}",
        "index": directory / f"IndexData{timestamp}",
        "inbox": directory / f"Inbox{timestamp}",
        "state": directory / f"state{timestamp}.json",
    }


def crawl_bundles(work_dir: PathLike, timestamp: int) -> list[Path]:
    """The bundle folders of crawl ``timestamp``, one per queue server, in server order."""
    work = Path(work_dir)
    found = []
    for qs in sorted(work.glob("qs*"), key=lambda p: (len(p.name), p.name)):
        if _QS.match(qs.name) and (qs / f"IndexData{timestamp}").is_dir():
            found.append(qs / f"IndexData{timestamp}")
    return found


def crawl_timestamps(work_dir: PathLike) -> list[int]:
    """Timestamps of every crawl that has a bundle under ``work_dir``, ascending."""
    stamps = set()
    for qs in Path(work_dir).glob("qs*/IndexData*"):
        match = _BUNDLE.match(qs.name)
        if match and _QS.match(qs.parent.name) and qs.is_dir():
            stamps.add(int(match.group(1)))
    return sorted(stamps)


def newest_crawl(work_dir: PathLike) -> int:
    """The newest crawl with a bundle under ``work_dir``; raises :class:`GraphNotFound`."""
    stamps = crawl_timestamps(work_dir)
    if not stamps:
        raise GraphNotFound(f"no crawl bundles under {work_dir}")
    return stamps[-1]


def graph_dir(work_dir: PathLike, timestamp: int) -> Path:
    return Path(work_dir) / LINKGRAPH_DIR / str(timestamp) / GRAPH_DIR


def scores_path(work_dir: PathLike, timestamp: int) -> Path:
    return Path(work_dir) / LINKGRAPH_DIR / str(timestamp) / SCORES_FILE


def score_files(work_dir: PathLike) -> list[Path]:
    """The score file of every crawl under ``work_dir`` that has one."""
    return list((Path(work_dir) / LINKGRAPH_DIR).glob(f"*/{SCORES_FILE}"))


def bundle_scores_path(bundle: PathLike) -> Path | None:
    """The scores file of the crawl a bundle folder (``<work>/qs<n>/IndexData<ts>``) belongs
    to, or None when the folder is not laid out that way."""
    bundle = Path(bundle)
    timestamp = bundle_timestamp(bundle.name)
    if timestamp is None or not _QS.match(bundle.parent.name):
        return None
    return scores_path(bundle.parent.parent, timestamp)


def near_duplicates_path(work_dir: PathLike, timestamp: int) -> Path:
    return Path(work_dir) / LINKGRAPH_DIR / str(timestamp) / NEAR_DUPLICATES_FILE


def bundle_near_duplicates_path(bundle: PathLike) -> Path | None:
    """The near-duplicate clusters file of the crawl a bundle folder belongs to (None when
    the folder is not laid out as ``<work>/qs<n>/IndexData<ts>``)."""
    scores = bundle_scores_path(bundle)
    return None if scores is None else scores.with_name(NEAR_DUPLICATES_FILE)


def phrases_path(bundle: PathLike) -> Path:
    """Where the common-phrase lexicon of a bundle folder lives."""
    return Path(bundle) / PHRASES_FILE
