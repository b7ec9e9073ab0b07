#!/usr/bin/env python
"""Crawl prioritisation on the local web's large tier: breadth first, host budgeting, and host
budgeting with needy queries (issue 9 and issue 35, seed 001), each stopped early, then how many
judged answers each crawl has indexed.

    .venv/bin/python bench/prioritisation_eval.py [--stops 0.02,0.05,0.1,0.25,0.5]
        [--schedule 100] [--every 200] [--threshold T] [--success]

The web: every page of ../shared/localweb's large tier (the pages manifest.py lists, read from
disk; robots-disallowed pages left out, as a polite crawler never fetches them). Its link
structure (targets canonicalised as manifest.py does, with their anchor texts, the first
``MAX_LINKS`` links of each page as the crawl's Page Options keep) is read once and cached under
``CACHE``. Links to the local web's hosts that are not pages (broken links) are fetches that
return nothing, as in a real crawl.

The crawls use the real scheduler (:class:`crawler.core.scheduler.CrawlQueue`, seeded with every
site's root page, robots handled by leaving disallowed pages out of the graph): each schedule
of ``--schedule`` urls is "fetched" by looking the urls up in the graph, and the links found go
back to the queue as a fetcher would send them (depth, link index, source tier and weight,
policy, anchor text). Each crawl runs until it has fetched the largest of ``--stops`` (shares of
the web's pages: 25 % and 50 %, which the issue asks for, and 2, 5 and 10 %, because on this web
every order has fetched every judged answer by 25 %), or until its queue is empty (about 15,600
pages are reachable from the roots); a crawl stopped at a smaller share is the same crawl's
first fetches (the queue's order does not depend on when it is stopped).

Needy queries are measured, not assumed: the needy crawl indexes what it has fetched every
``--every`` fetches, or a tenth of its fetches so far when that is more (the engine's page processor
and indexer, then ``Searcher``, the engine's ranking pipeline), issues the 120 queries of
../shared/judgments/dev.tsv (the query stream) against that partial index, logs each query's
mean top-10 relevance share (``ranking.core.search.explain.relevance_share``, missing results 0,
as the search page logs it in ``querylog.models.QueryLog``) and gives the queue the queries whose
mean is below ``--threshold`` (frequency: how often each was asked so far), exactly what a queue
server gets from ``crawler.machines.needy``. At the start, with nothing indexed, every query is
needy.

The report, per crawl and stop: ``<crawl>_judged_answers_at_<pct>``, how many of the judged
answers (the distinct relevant urls of ../shared/judgments/dev.tsv) the crawl has fetched, and
so indexed, and ``<crawl>_queries_answerable_at_<pct>``, how many judged queries have at least
one of their answers indexed. ``--success`` also indexes each crawl's pages at the largest stop
and runs the judged queries (Success@10 and MRR@10 from ../shared/judgments/score.py). Processed
pages are cached under ``CACHE`` (key: the Page Options and the code of crawler/core and
indexer/core that builds documents), so later runs only crawl, index and search.

Lines are ``name: value unit``; the last ones are ``target: ... met|NOT met``.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import os
import pickle
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from crawler.core.definition.crawl import CrawlOrder, RobotsBehaviour  # noqa: E402
from crawler.core.definition.needy import NeedyQuery  # noqa: E402
from crawler.core.definition.siterules import SiteRules  # noqa: E402
from crawler.core.processing.config import PageProcessingConfig  # noqa: E402
from crawler.core.processing.indexing import to_index_documents  # noqa: E402
from crawler.core.processing.page import FetchedPage  # noqa: E402
from crawler.core.processing.process import PageProcessor  # noqa: E402
from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, SchedulerConfig  # noqa: E402
from crawler.core.transport.wire import document_from_wire, document_to_wire  # noqa: E402
from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter  # noqa: E402
from indexer.core.text import TextAnalyzer  # noqa: E402
from indexer.core.urls import url_host  # noqa: E402
from ranking.core.search.explain import relevance_share  # noqa: E402
from ranking.core.search.pipeline import Searcher  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402

SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
sys.path.insert(0, str(SHARED / "localweb"))
sys.path.insert(0, str(SHARED / "judgments"))
import manifest as M  # noqa: E402  (the local web's own canonicalisation)
import relevance_eval as R  # noqa: E402  (its Page Options, query loading and scoring)
import score  # noqa: E402
import sites as S  # noqa: E402
from localweb_links import link_target  # noqa: E402

CACHE = Path(os.environ.get("PRIO_CACHE", "/tmp/yioopy-prio"))
GRAPH_VERSION = "1"
# Links kept per page, in the web graph and when its pages are indexed: 300, the setting issue 9's
# figures were taken with (relevance_eval's default tier now keeps every link; a different value
# here would be a different web for the three crawl orders, and the cached graph is keyed by
# GRAPH_VERSION only).
MAX_LINKS = 300
NEEDY_THRESHOLD = 0.5   # mean top-10 relevance share under which a query is needy (--threshold)
TOP_K = 10
EVERY = 200  # fetches between two rounds of the query stream, at least (see --every)
LINK = re.compile(rb"""<a\s[^>]*?href\s*=\s*(["'])(.*?)\1[^>]*>(.*?)</a\s*>""", re.I | re.S)
TAG = re.compile(r"<[^>]+>")


def out(name: str, value: float | int | str, unit: str = "") -> None:
    if isinstance(value, float):
        value = f"{value:.3f}"
    print(f"{name}: {value} {unit}".rstrip(), flush=True)


# -- the web: pages and links, read once ------------------------------------------------------


def _pages() -> list[tuple[str, str, bool]]:
    """(url, file, robots-allowed) of every page manifest.py lists for the large tier."""
    import urllib.robotparser

    pages = []
    for site in S.sites("large"):
        robots = urllib.robotparser.RobotFileParser()
        robots.parse(S.ROBOTS.get(site["host"], S.ALLOW_ALL).splitlines())
        pages.append((S.root_url(site), os.path.join(S.BUILD, "www", site["host"], "index.html"),
                      True))
        for url, path, _ in S.walk_pages(site):
            pages.append((url, path, robots.can_fetch("*", url)))
    return pages


def _links_of(job: tuple[str, str]) -> list[tuple[str, str]]:
    url, path = job
    by_host = {s["host"]: s for s in S.sites("large")}
    data = M.read_page(path)
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for match in LINK.finditer(data):
        target = link_target(url, match.group(2), by_host)
        if target is None or target in seen or target == url:
            continue
        seen.add(target)
        text = " ".join(html.unescape(TAG.sub(" ", match.group(3).decode("utf-8", "replace")))
                        .split())[:100]
        found.append((target, text))
        if len(found) >= MAX_LINKS:
            break
    return found


class Web:
    """The large tier as arrays: url ids, files, which ids are fetchable pages, and each page's
    links (target ids, anchor texts) in page order."""

    def __init__(self, urls: list[str], files: list[str], is_page: np.ndarray,
                 links: list[tuple[np.ndarray, list[str]]]) -> None:
        self.urls, self.files, self.is_page, self.links = urls, files, is_page, links
        self.ids = {url: i for i, url in enumerate(urls)}

    @classmethod
    def load(cls) -> Web:
        path = CACHE / f"web-large-{GRAPH_VERSION}.pkl"
        if path.exists():
            with open(path, "rb") as handle:
                return cls(*pickle.load(handle))
        start = time.perf_counter()
        pages = _pages()
        allowed = [(url, file) for url, file, ok in pages if ok]
        disallowed = {url for url, _, ok in pages if not ok}
        urls = [url for url, _ in allowed]
        files = [file for _, file in allowed]
        ids = {url: i for i, url in enumerate(urls)}
        with ProcessPoolExecutor(2) as pool:
            found = list(pool.map(_links_of, allowed, chunksize=64))
        links = []
        for page_links in found:
            targets, anchors = [], []
            for target, text in page_links:
                if target in disallowed:
                    continue  # robots.txt: never fetched
                tid = ids.get(target)
                if tid is None:  # a broken link on our hosts: a fetch that finds nothing
                    tid = ids[target] = len(urls)
                    urls.append(target)
                    files.append("")
                targets.append(tid)
                anchors.append(text)
            links.append((np.array(targets, dtype=np.int32), anchors))
        is_page = np.zeros(len(urls), dtype=bool)
        is_page[: len(allowed)] = True
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".tmp"), "wb") as handle:
            pickle.dump((urls, files, is_page, links), handle, protocol=5)
        os.replace(path.with_suffix(".tmp"), path)
        out("web_read_s", time.perf_counter() - start, "s")
        return cls(urls, files, is_page, links)

    def roots(self) -> list[str]:
        return [S.root_url(site) for site in S.sites("large")]


# -- documents: the engine's page processor, cached --------------------------------------------

_processor: PageProcessor | None = None
_analyzer: TextAnalyzer | None = None


def _process_options() -> PageProcessingConfig:
    return replace(PageProcessingConfig.from_options(
        replace(R.crawl_options(), max_links_to_extract=MAX_LINKS)),
        robot_name=R.USER_AGENT.split("/")[0])


def _doc_key() -> str:
    digest = hashlib.sha1(repr(_process_options()).encode())
    for package in ("crawler/core/processing/processors", "crawler/core/processing/indexing.py",
                    "crawler/core/processing/process.py", "indexer/core/text"):
        target = ROOT / package
        for path in sorted([target] if target.is_file() else target.rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _process(job: tuple[str, str, str]) -> str:
    global _processor, _analyzer
    url, file, dest = job
    if _processor is None:
        _processor = PageProcessor(_process_options())
        _analyzer = TextAnalyzer()
    page = _processor.process(FetchedPage(url=url, body=R._read(file), status=200,
                                          headers={"content-type": "text/html"},
                                          fetched_at=1_700_000_000.0))
    docs = [document_to_wire(doc) for doc in to_index_documents(page, _analyzer)]
    tmp = dest + ".tmp"
    with open(tmp, "wb") as handle:
        pickle.dump(docs, handle, protocol=5)
    os.replace(tmp, dest)
    return dest


class Documents:
    """Index documents of fetched pages, processed once (two processes) and kept on disk."""

    def __init__(self, web: Web, workers: int = 2) -> None:
        self.web = web
        self.folder = CACHE / f"docs-{_doc_key()}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.pool = ProcessPoolExecutor(workers)
        self.processed = 0

    def _path(self, uid: int) -> str:
        return str(self.folder / f"{hashlib.sha1(self.web.urls[uid].encode()).hexdigest()}.pkl")

    def get(self, ids: Iterable[int]) -> list:
        ids = [uid for uid in ids if self.web.is_page[uid]]
        todo = [(self.web.urls[uid], self.web.files[uid], self._path(uid)) for uid in ids
                if not os.path.exists(self._path(uid))]
        if todo:
            list(self.pool.map(_process, todo, chunksize=8))
            self.processed += len(todo)
        docs = []
        for uid in ids:
            with open(self._path(uid), "rb") as handle:
                docs.extend(document_from_wire(doc) for doc in pickle.load(handle))
        return docs

    def close(self) -> None:
        self.pool.shutdown()


# -- the partial index and the query stream ----------------------------------------------------


class GrowingIndex:
    """An index bundle the crawl's pages are appended to; ``searcher()`` sees what is in."""

    def __init__(self, folder: Path, documents: Documents) -> None:
        self.path = folder / "IndexData"
        self.writer = IndexBundleWriter(self.path, BundleConfig(),
                                        crawl_parameters={"timestamp": R.CRAWL_TIMESTAMP,
                                                          "name": "prioritisation"})
        self.documents = documents
        self.count = 0

    def add(self, ids: list[int]) -> None:
        docs = self.documents.get(ids)
        if docs:
            self.writer.append(docs)
            self.count += len(docs)

    def search_all(self, queries: list[tuple[str, str]]) -> dict[str, tuple[list[str], list]]:
        self.writer.refresh()
        if not self.count:
            return {qid: ([], []) for qid, _ in queries}
        reader = IndexBundleReader(self.path)
        try:
            searcher = Searcher([LocalShard(reader)], link_scores=_NoLinkScores())
            found = {}
            for qid, query in queries:
                results = searcher.search(query, num=TOP_K, snippets=False).results
                found[qid] = ([r.url for r in results],
                              [relevance_share(r.explanation) for r in results])
            return found
        finally:
            close = getattr(reader, "close", None)
            if close is not None:
                close()

    def close(self) -> None:
        self.writer.close()


class _NoLinkScores:
    """No link-analysis scores file for these crawls: the link score is 0."""

    def get(self):
        return None


def mean_top(scores: list[float]) -> float:
    best = sorted(scores, reverse=True)[:TOP_K]
    return sum(best) / TOP_K


# -- the crawl -------------------------------------------------------------------------------


def crawl(web: Web, order: CrawlOrder, pages: int, schedule_size: int, folder: Path,
          needy: GrowingIndex | None = None, queries: list[tuple[str, str]] = (),
          every: int = 250, threshold: float = NEEDY_THRESHOLD) -> tuple[list[int], dict]:
    """Fetch ids in the queue's order until ``pages`` fetches; with ``needy``, index and query
    every ``every`` fetches and hand the needy queries to the queue."""
    hosts = frozenset(url_host(url) for url in web.roots())
    config = SchedulerConfig(order=order, schedule_size=schedule_size,
                             robots=RobotsBehaviour.IGNORE, fsync=False,
                             site_rules=SiteRules(restrict=True, seed_hosts=hosts),
                             bloom_expected_urls=400_000, checkpoint_journal_bytes=1 << 40,
                             need_weight=1.0 if needy is not None else 0.0)
    fetched: list[int] = []
    asked: Counter[str] = Counter()
    info = {"checks": 0, "needy": [], "lane": [], "search_s": 0.0, "index_s": 0.0}
    text = dict(queries)
    indexed = 0
    next_check = every

    def check() -> None:
        nonlocal indexed
        start = time.perf_counter()
        needy.add(fetched[indexed:])
        indexed = len(fetched)
        mid = time.perf_counter()
        found = needy.search_all(queries)
        info["index_s"] += mid - start
        info["search_s"] += time.perf_counter() - mid
        needy_now = []
        info.setdefault("means", []).append(statistics.median(
            mean_top(scores) for _, scores in found.values()))
        for qid, (_, scores) in found.items():
            asked[qid] += 1
            if mean_top(scores) < threshold:
                needy_now.append(NeedyQuery(text[qid], float(asked[qid]), mean_top(scores)))
        queue.set_needy_queries(needy_now)
        info["checks"] += 1
        info["needy"].append(len(needy_now))

    with CrawlQueue.open(folder / "queue", config) as queue:
        queue.add_seeds(web.roots())
        if needy is not None:
            check()
        while len(fetched) < pages:
            schedule = queue.next_schedule()
            if schedule is None:
                break
            found: list[DiscoveredUrl] = []
            for entry in schedule.entries:
                if entry.is_robots or len(fetched) >= pages:
                    continue
                uid = web.ids.get(entry.url)
                if uid is None:
                    continue  # off the local web (refused by the site rules in a real crawl)
                fetched.append(uid)
                if not web.is_page[uid]:
                    continue  # a broken link: 404
                targets, anchors = web.links[uid]
                for index, (tid, anchor) in enumerate(zip(targets.tolist(), anchors,
                                                          strict=True)):
                    found.append(DiscoveredUrl(
                        web.urls[tid], entry.depth + 1, index, source_url=entry.url,
                        source_weight=entry.weight, source_tier=entry.tier,
                        policy=entry.policy, policy_depth=entry.policy_depth + 1,
                        anchor_text=anchor))
            if found:
                queue.add_discovered(found)
            queue.acknowledge(schedule.id)
            if needy is not None and len(fetched) >= next_check:
                info["lane"].append(queue.stats().needy_queued)
                check()
                next_check += max(every, len(fetched) // 10)
    return fetched, info


def evaluate(index_folder: Path, documents: Documents, ids: list[int],
             queries: list[tuple[str, str]], name: str) -> dict[str, float]:
    index = GrowingIndex(index_folder, documents)
    try:
        index.add(ids)
        found = index.search_all(queries)
    finally:
        index.close()
    run = {qid: urls for qid, (urls, _) in found.items()}
    return R.evaluate(run, index_folder / f"run-{name}.tsv")


def judged_answers(web: Web) -> dict[str, set[int]]:
    """The url ids of each judged query's answers (the relevant urls of dev.tsv on the web)."""
    qrels = score.load_qrels(str(SHARED / "judgments" / "dev.tsv"))
    by_canon: dict[str, int] = {}
    for uid, url in enumerate(web.urls):
        by_canon.setdefault(score.canon(url), uid)
    return {qid: {by_canon[u] for u in rel["rel"] if u in by_canon}
            for qid, rel in qrels.items()}


def answers_indexed(answers: dict[str, set[int]], ids: list[int]) -> tuple[int, int]:
    """(judged answers among ``ids``, judged queries with at least one of them)."""
    have = set(ids)
    found = set().union(*answers.values()) & have
    return len(found), sum(1 for rel in answers.values() if rel & have)


def report_query_stream(name: str, info: dict) -> None:
    """The needy crawl's query stream: rounds, needy queries, lane sizes, times."""
    out(f"{name}_query_rounds", info["checks"])
    out(f"{name}_needy_first_last", f"{info['needy'][0]} -> {info['needy'][-1]}", "queries")
    if info["lane"]:
        out(f"{name}_needy_lane_median", statistics.median(info["lane"]), "urls")
    out(f"{name}_median_mean_top10_last", info["means"][-1], "relevance share")
    out(f"{name}_partial_index_s", info["index_s"], "s")
    out(f"{name}_query_stream_s", info["search_s"], "s")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--stops", default="0.02,0.05,0.1,0.25,0.5",
                        help="shares of the web's pages at which the crawls are stopped")
    parser.add_argument("--schedule", type=int, default=100, help="urls per schedule")
    parser.add_argument("--every", type=int, default=EVERY,
                        help="fetches between two rounds of the query stream (needy crawl), "
                             "at least; a tenth of the fetches so far once that is more")
    parser.add_argument("--threshold", type=float, default=NEEDY_THRESHOLD,
                        help="mean top-10 relevance share under which a query is needy")
    parser.add_argument("--success", action="store_true",
                        help="also index each crawl at its largest stop and run the queries")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    started = time.perf_counter()
    if not S.sites("large"):
        raise SystemExit("the large tier is not installed (sh ../shared/localweb/setup.sh "
                         "--large as root)")
    web = Web.load()
    pages_total = int(web.is_page.sum())
    out("web_pages", pages_total, "pages")
    out("web_links", int(sum(len(t) for t, _ in web.links)), "links")
    shares = sorted(float(x) for x in args.stops.split(",") if x.strip())
    stops = [(share, max(1, int(round(share * pages_total)))) for share in shares]
    longest = stops[-1][1]
    every = args.every
    out("needy_threshold", args.threshold, "relevance share")
    out("needy_every", every, "fetches")
    queries = R.load_queries()
    answers = judged_answers(web)
    out("judged_answers", len(set().union(*answers.values())), "urls")
    out("judged_queries", sum(1 for rel in answers.values() if rel), "queries")
    documents = Documents(web)
    results: dict[str, dict[int, tuple[int, int]]] = {}
    work = Path(tempfile.mkdtemp(prefix="prio-", dir=CACHE))
    try:
        orders = (("breadth_first", CrawlOrder.BREADTH_FIRST, False),
                  ("host_budgeting", CrawlOrder.HOST_BUDGETING, False),
                  ("needy_queries", CrawlOrder.HOST_BUDGETING, True))
        for name, order, with_needy in orders:
            folder = work / name
            folder.mkdir()
            start = time.perf_counter()
            growing = GrowingIndex(folder / "partial", documents) if with_needy else None
            try:
                ids, info = crawl(web, order, longest, args.schedule, folder, growing,
                                  queries, every, args.threshold)
            finally:
                if growing is not None:
                    growing.close()
            crawl_s = time.perf_counter() - start
            results[name] = {}
            for share, stop in stops:
                pages = [uid for uid in ids[:stop] if web.is_page[uid]]
                found, answerable = answers_indexed(answers, pages)
                results[name][stop] = (found, answerable)
                pct = f"{round(share * 100)}"
                out(f"{name}_pages_at_{pct}", len(pages), "pages")
                out(f"{name}_judged_answers_at_{pct}", found, "urls")
                out(f"{name}_queries_answerable_at_{pct}", answerable, "queries")
            if args.success:
                metrics = evaluate(folder / "final", documents, ids, queries, name)
                out(f"{name}_success_at_10", metrics["S@10"])
                out(f"{name}_mrr_at_10", metrics["MRR@10"])
            out(f"{name}_crawl_s", crawl_s, "s")
            if with_needy:
                report_query_stream(name, info)
    finally:
        documents.close()
        shutil.rmtree(work, ignore_errors=True)
    out("pages_processed_this_run", documents.processed, "pages")
    total = time.perf_counter() - started
    out("total_s", total, "s")
    for share, stop in stops:
        pct = f"{round(share * 100)}"
        needy = results["needy_queries"][stop][0]
        without = results["host_budgeting"][stop][0]
        print(f"target: judged answers indexed at {pct} % of the pages, with needy queries "
              f"{needy} (goal > without, {without}) {'met' if needy > without else 'NOT met'}")
    print(f"target: run time {total:.0f} s (goal < 1800 s) "
          f"{'met' if total < 1800 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
