"""Page processing as a job: run in the fetcher's thread, or in processes sized to the cores.

Layer: ``crawler.core.fetcher``. Processing a downloaded page
(:mod:`crawler.core.processing.process`, then
its index documents, :mod:`crawler.core.processing.indexing`, encoded as the index stores them) is
most of a fetcher's CPU, and in one Python process it holds the interpreter lock: a crawl run inside
one process (``manage.py crawl``, :class:`crawler.core.local_crawl.LocalCrawl`) would use one
core however many it has. So the page handling (:mod:`.pages`) hands each download to a
:class:`PageProcessing`:

* :class:`InlineProcessing` processes it at once in the calling thread (the Celery fetchers,
  which are already one process per core, and machines with one core);
* :class:`ProcessPool` sends it to one of N worker processes (N = the cores by default), each
  with its own :class:`~crawler.core.processing.process.PageProcessor` built from the crawl's
  :class:`~crawler.core.processing.config.PageProcessingConfig`, and answers with a future.

Both take a :class:`PageJob` (the download: plain, picklable facts) and answer a
:class:`PageOutput` (the page's facts the handling needs, its documents already encoded for the
wire, and its kept links). The job is the same function either way (:func:`process_job`), so a
page gives the same documents in a pool as inline. A pool given the crawl's
:class:`~crawler.core.definition.crawl.CrawlConfig` also makes the page's discovered urls
(:class:`.emit.LinkEmitter`, without link scores) when the job names the schedule entry it
was fetched for (:attr:`PageJob.entry`). Fetching stays in the fetcher's threads
(asynchronous downloads); the index writer stays in the queue server.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.fetcher.budget_pool import BudgetPool
from crawler.core.fetcher.emit import LinkEmitter
from crawler.core.fetcher.thread_budget import ThreadBudget
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.indexing import iter_index_documents
from crawler.core.processing.page import FetchedPage, Link, ProcessedPage
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import ScheduleEntry
from crawler.core.transport.visits import Outcome, outcome_of
from crawler.core.transport.wire import encoded_document_to_wire
from indexer.core.ids import DocType
from indexer.core.signals.simhash import title_tag
from indexer.core.text import TextAnalyzer


@dataclass(frozen=True, slots=True)
class PageJob:
    """One download to process: the page as fetched, the redirect hops before it (each
    ``(source, status, target)``, made location documents) and the text hash of the copy in
    the index (``previous_hash``, hex; None on a first visit: an unchanged page makes no
    documents)."""

    url: str
    body: bytes
    status: int
    headers: dict[str, str]
    fetched_at: float
    download_time: float = 0.0
    ip: str = ""
    redirects: tuple[tuple[str, int, str], ...] = ()
    previous_hash: str | None = None
    entry: ScheduleEntry | None = None


@dataclass(frozen=True, slots=True)
class PageLinks:
    """What :class:`crawler.core.fetcher.emit.LinkEmitter` reads of a processed page to make
    its discovered urls."""

    url: str
    links: tuple[Link, ...]
    fields: dict[str, Any]
    safe: bool
    is_sitemap: bool

    @classmethod
    def of(cls, page: ProcessedPage) -> PageLinks:
        return cls(page.url, page.links, dict(page.fields), page.safe, page.is_sitemap)


@dataclass(frozen=True, slots=True)
class PageOutput:
    """A processed download: the page's identity and outcome, its documents (the redirect
    hops' location documents first, then the page's own and its link documents: ``(url,
    wire document)``, :func:`crawler.core.transport.wire.encoded_document_to_wire`) and its links,
    or its discovered urls' rows (``discovered``, when the job asked for them; then ``links`` is
    None)."""

    url: str
    host: str
    doc_type: DocType
    text_hash: bytes
    indexable: bool
    robot_metas: frozenset[str]
    fetched_at: float
    outcome: Outcome
    documents: tuple[tuple[str, dict[str, Any]], ...]
    links: PageLinks | None
    discovered: tuple[list[Any], ...] | None = None
    refused: tuple[list[Any], ...] = ()  # with ``discovered``: the links left out, why
    simhash: int = 0  # the page's SimHash (indexer.core.signals.simhash), for its visit
    title_tag: int = 0  # and its title key's number


def process_job(processor: PageProcessor, analyzer: TextAnalyzer, job: PageJob,
                emitter: LinkEmitter | None = None) -> PageOutput:
    """Process one download (the same work whether inline or in a pool); with ``emitter``
    and ``job.entry``, make its discovered urls too."""
    page = processor.process(FetchedPage(
        url=job.url, body=job.body, status=job.status, headers=job.headers,
        fetched_at=job.fetched_at, download_time=job.download_time, ip=job.ip))
    outcome = outcome_of(job.status, False, page.indexable, page.text_hash.hex(),
                         job.previous_hash)
    documents: list[tuple[str, dict[str, Any]]] = []
    if outcome is not Outcome.UNCHANGED:  # an unchanged page costs no re-indexing
        for source, status, target in job.redirects:
            hop = processor.process(FetchedPage(url=source, body=b"", status=status,
                                                headers={"location": target},
                                                fetched_at=page.fetched_at))
            documents.extend(_encoded(hop, analyzer))
        documents.extend(_encoded(page, analyzer))
    if emitter is not None and job.entry is not None:
        refused: list[list[Any]] = []
        discovered = () if outcome is Outcome.UNCHANGED else tuple(
            emitter.discovered(page, job.entry, refused))
        return PageOutput(page.url, page.host, page.doc_type, page.text_hash, page.indexable,
                          page.robot_metas, page.fetched_at, outcome, tuple(documents), None,
                          discovered, tuple(refused), page.simhash, title_tag(page.title))
    return PageOutput(page.url, page.host, page.doc_type, page.text_hash, page.indexable,
                      page.robot_metas, page.fetched_at, outcome, tuple(documents),
                      PageLinks.of(page), simhash=page.simhash,
                      title_tag=title_tag(page.title))


def _encoded(page: ProcessedPage, analyzer: TextAnalyzer) -> list[tuple[str, dict[str, Any]]]:
    return [(doc.url, encoded_document_to_wire(doc))
            for doc in iter_index_documents(page, analyzer)]


class PageProcessing(Protocol):
    """Where downloads are processed. ``submit`` never raises on page content (the page
    processor's contract); ``close`` ends the workers. ``emits_links``: a job that names its
    entry gets its discovered urls as a :class:`.emit.LinkEmitter` of the crawl without link
    scores makes them."""

    emits_links: bool

    def submit(self, job: PageJob) -> Future[PageOutput]: ...

    def close(self) -> None: ...


class InlineProcessing:
    """Processes each job at once in the calling thread; the future is already done. The
    calling thread makes the discovered urls itself (with its own link scores). A job past
    ``config.cpu_seconds`` of the thread's CPU is answered with
    :class:`~.budget_pool.TooSlow`, but only Python-level work is stopped
    (:mod:`.thread_budget`): a libxml2 XPath evaluation runs to its end first; only the worker
    processes of a :class:`ProcessPool` stop it."""

    emits_links = False

    def __init__(self, processor: PageProcessor, analyzer: TextAnalyzer | None = None) -> None:
        self.processor = processor
        self.analyzer = analyzer or processor.analyzer
        self._budget = ThreadBudget()

    def submit(self, job: PageJob) -> Future[PageOutput]:
        future: Future[PageOutput] = Future()
        try:
            with self._budget.limit(self.processor.config.cpu_seconds):
                output = process_job(self.processor, self.analyzer, job)
            future.set_result(output)
        except Exception as exc:  # a bug, surfaced where the result is read
            future.set_exception(exc)
        return future

    def close(self) -> None:
        """Nothing to end: the work ran in the callers' threads."""


# the worker process's processor and link emitter, built once by _start_worker
_worker_processor: PageProcessor | None = None
_worker_emitter: LinkEmitter | None = None
PARENT_POLL_SECONDS = 1.0


def _start_worker(config: PageProcessingConfig, crawl: CrawlConfig | None, parent: int) -> None:
    """A worker process starts: Ctrl-C is the crawl's to handle (its process stops the
    crawl and then the pool), and the worker exits by itself once ``parent`` is gone, however
    it went (kill -9 included)."""
    global _worker_processor, _worker_emitter
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_processor = PageProcessor(config, TextAnalyzer())
    _worker_emitter = None if crawl is None else LinkEmitter(crawl)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True,
                     name="parent-watch").start()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _run_job(job: PageJob) -> PageOutput:
    processor = _worker_processor
    assert processor is not None, "the worker was started without its processor"
    return process_job(processor, processor.analyzer, job, _worker_emitter)


def default_processes() -> int:
    """The cores this process may run on (the worker processes a pool gets by default)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ProcessPool:
    """``processes`` worker processes, each with a processor of ``config`` (and, given the
    ``crawl``, its link emitter: :attr:`emits_links`). Started with *spawn*: the crawl's
    process has fetcher threads, and a fork would copy locks they hold. A page whose processing
    uses more than ``config.cpu_seconds`` of its worker's CPU (lxml's XPath included: the
    worker is killed and replaced, :mod:`.budget_pool`) is answered with
    :class:`~.budget_pool.TooSlow`. Not restartable after :meth:`close`."""

    def __init__(self, config: PageProcessingConfig, processes: int | None = None,
                 crawl: CrawlConfig | None = None) -> None:
        self.processes = max(1, processes or default_processes())
        self.emits_links = crawl is not None
        self._pool = BudgetPool(_run_job, self.processes, config.cpu_seconds,
                                initializer=_start_worker, initargs=(config, crawl, os.getpid()))

    def pids(self) -> list[int]:
        """The worker processes' ids now."""
        return self._pool.pids()

    def submit(self, job: PageJob) -> Future[PageOutput]:
        return self._pool.submit(job)

    def close(self) -> None:
        self._pool.close()


def page_processing(processor: PageProcessor, processes: int | None,
                    crawl: CrawlConfig | None = None) -> PageProcessing:
    """A pool of ``processes`` workers (None: one per core) that also make the discovered
    urls of ``crawl`` when given, or inline processing when that is one or fewer: one core
    gains nothing from a second process."""
    count = default_processes() if processes is None else processes
    if count <= 1:
        return InlineProcessing(processor)
    return ProcessPool(processor.config, count, crawl)
