"""What the cluster test checks after a crawl, each check as lines naming machines and roles.

Every check reads what a user could: the shared database (through ``manage.py shell`` on the
web machine), the queue servers' index bundles and score files in each machine's own folder,
the search page's JSON answer on the web machine, and the fixture site's own request log.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.runtime.workdir import crawl_paths, scores_path
from indexer.core.signals.link_scores import LinkScores

from .sites import Host


@dataclass
class Check:
    name: str
    ok: bool = True
    lines: list[str] = field(default_factory=list)

    def note(self, line: str, ok: bool = True) -> None:
        self.lines.append(("  " if ok else "  FAIL ") + line)
        self.ok = self.ok and ok


def indexed_urls(work: Path, server: int, timestamp: int) -> set[str]:
    """Urls of the fetched pages (not link documents) in queue server ``server``'s index."""
    index = crawl_paths(work / f"qs{server}", timestamp)["index"]
    if not Path(index).exists():
        return set()
    reader = IndexBundleReader(index)
    urls = set()
    for part in reader.partitions:
        for i in range(part.doc_map.n):
            summary = reader.summary(reader.doc_id(part.number, i))
            if summary and "content_hash" in summary and not summary.get("location"):
                urls.add(summary["url"])
    return urls


def site_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def check_fetchers(facts: dict, log: list[dict], nodes: dict[str, str]) -> Check:
    """Every fetcher node (role -> address) did work: its Fetcher rows, and the site's log."""
    check = Check("every fetcher node did work")
    by_client = Counter(e["client"] for e in log)
    for role, address in nodes.items():
        rows = [f for f in facts["fetchers"] if f["host"] == role]
        schedules, pages = sum(f["schedules"] for f in rows), sum(f["pages"] for f in rows)
        check.note(f"{role} ({address}): {len(rows)} fetcher process(es), {schedules} schedules,"
                   f" {pages} pages; the sites logged {by_client[address]} requests from it",
                   schedules > 0 and pages > 0 and by_client[address] > 0)
    return check


def check_shards(facts: dict, urls: dict[int, set[str]], hosts: list[Host]) -> Check:
    """Both queue servers indexed their own hosts, and only those."""
    check = Check("both queue servers indexed their hosts")
    for q in facts["queue_servers"]:
        server = q["server"]
        mine = {h.address for h in hosts if h.shard == server}
        got = Counter(urlsplit(u).hostname for u in urls.get(server, set()))
        stray = set(got) - mine
        check.note(f"queue server {server} (qs{server}, {q['url']}): "
                   f"{q['counters'].get('documents_indexed', 0)} documents indexed, "
                   f"{len(urls.get(server, ()))} pages: "
                   + ", ".join(f"{h.name} {got[h.address]}" for h in hosts if h.shard == server)
                   + (f"; hosts it does not own: {sorted(stray)}" if stray else ""),
                   all(got[a] > 0 for a in mine) and not stray)
    return check


def check_same_urls(cluster: set[str], solo: set[str], expected: set[str]) -> Check:
    check = Check("the crawled url set equals a single-machine crawl's")
    check.note(f"cluster {len(cluster)} urls, single machine {len(solo)} urls, the sites "
               f"{len(expected)} reachable pages", cluster == solo and len(cluster) > 0)
    if cluster != solo:
        check.note(f"only in the cluster's: {sorted(cluster - solo)[:10]}; only in the single "
                   f"machine's: {sorted(solo - cluster)[:10]}", False)
    if cluster != expected:
        check.note(f"missed: {sorted(expected - cluster)[:10]}; beyond the sites: "
                   f"{sorted(cluster - expected)[:10]}", False)
    return check


def check_search(answers: dict[str, dict], hosts: list[Host]) -> Check:
    """A search on web for each host's own word finds that host's pages, whichever shard."""
    check = Check("the search page on web fans out to both queue servers")
    shards_found = set()
    for host in hosts:
        answer = answers[host.name]
        found = {urlsplit(r["url"]).hostname for r in answer.get("results", [])}
        ok = found == {host.address} and not answer.get("partial")
        if ok:
            shards_found.add(host.shard)
        check.note(f"q={host.word} (only on {host.name}, queue server {host.shard}): "
                   f"{answer.get('total')} results, hosts {sorted(found)}, partial "
                   f"{answer.get('partial')}", ok)
    check.note(f"answers came from queue servers {sorted(shards_found)}",
               shards_found == {h.shard for h in hosts})
    return check


def check_link_analysis(facts: dict, works: dict[int, Path], timestamp: int,
                        urls: dict[int, set[str]]) -> Check:
    """The crawl's link analysis read every shard, and every queue server's machine holds the
    scores of the urls of both shards."""
    check = Check("link analysis covers every shard")
    last = (facts["link_analysis"] or {}).get("last") or {}
    shards = last.get("shards") or []
    read = {s.get("server"): s.get("documents") or 0 for s in shards}
    check.note(f"last run: {last.get('outcome')!r}, {last.get('pages')} pages, "
               f"{last.get('urls')} urls, {last.get('edges')} links", last.get("outcome") == "ok")
    for s in shards:
        check.note(f"shard {s.get('server')} at {s.get('location')}: {s.get('documents')} "
                   f"documents read ({s.get('note')})", (s.get("documents") or 0) > 0)
    check.note(f"shards read: {sorted(read)}", all(read.get(n, 0) > 0 for n in works))
    for server, work in works.items():
        path = scores_path(work, timestamp)
        if not path.exists():
            check.note(f"qs{server}: no scores file at {path}", False)
            continue
        scores = LinkScores(path)
        known = {s: sum(scores.score_of(u, "inlinks", -1.0) >= 0 for u in shard_urls)
                 for s, shard_urls in urls.items()}
        check.note(f"qs{server}: scores of {len(scores)} urls; known urls of "
                   + ", ".join(f"shard {s} {known[s]}/{len(urls[s])}" for s in sorted(urls)),
                   all(known[s] == len(urls[s]) > 0 for s in urls))
    return check


def ranking_queries(hosts: list[Host]) -> list[str]:
    """Queries with ten results or more in the cluster's crawl, built from its own pages (the
    dev judgments' queries are about the local web's Debian manuals, which the fixture sites do
    not hold): words of every page (on both shards), each host's own word and name, and two
    of a host name and a title word."""
    return ["common words", "page", "home", *[h.word for h in hosts],
            *[h.name for h in hosts], f"{hosts[0].name} page", f"{hosts[1].name} home"]


def top_ten(answer: dict) -> list[list]:
    """The search page's top 10 as [url, score] (score rounded as the one-machine side's)."""
    return [[r["url"], round(float(r["score"]), 6)] for r in answer.get("results", [])[:10]]


def check_same_ranking(web: dict[str, dict], one: dict[str, list[list]], attempts: int,
                       web_work: Path) -> Check:
    """The name server's search page (remote shards only) gives each query the top 10 one
    machine gives over the same two bundles: the same urls in the same order with the same
    scores (a query of the four home pages has four), and link scores did reach the name
    server, which holds no scores file (results with a link score > 0)."""
    check = Check("the name server ranks as one machine (top 10 of every query)")
    own = sorted(str(p) for p in web_work.rglob("scores.npz")) if web_work.exists() else []
    check.note(f"web's own scores files: {own or 'none'}", not own)
    linked = 0
    for query, answer in web.items():
        mine, theirs = top_ten(answer), one.get(query, [])
        linked += sum(1 for r in answer.get("results", [])[:10]
                      if ((r.get("explanation") or {}).get("link_score") or {})
                      .get("value", 0) > 0)
        same = mine == theirs and len(mine) > 0
        check.note(f"q={query!r}: web {len(mine)} results, "
                   + (f"the same {len(mine)} (urls, order, scores) as one machine" if same else
                      f"differs: web {mine[:3]}... one machine {theirs[:3]}..."), same)
    check.note(f"{linked} of the web's top-10 results carry a link score > 0 (from the shards'"
               " copies of the scores)", linked > 0)
    check.note(f"compared after {attempts} attempt(s) (a queue server may still be re-ordering "
               "a finished partition by the newest scores: at most 3, 5 s apart)")
    return check


def check_fetch_node_scores(fetch_work: Path, timestamp: int) -> Check:
    """The fetcher-only node holds the crawl's scores file, fetched from a queue server that
    announced it in a schedule message (crawler.machines.score_delivery)."""
    check = Check("the fetcher-only node received the link scores")
    path = scores_path(fetch_work, timestamp)
    if not path.exists():
        check.note(f"fetch: no scores file at {path}", False)
        return check
    scores = LinkScores(path)
    check.note(f"fetch: scores of {len(scores)} urls (version {scores.version}, crawl "
               f"{scores.meta.get('crawl')}) at {path}",
               len(scores) > 0 and scores.meta.get("crawl") == timestamp)
    return check


def check_politeness(log: list[dict], host: Host, roles: dict[str, str],
                     solo_agent: str) -> Check:
    """No two of the cluster's requests to the crawl-delayed host closer than its delay."""
    check = Check(f"politeness held across fetcher nodes ({host.name}: Crawl-delay "
                  f"{host.crawl_delay:g} s)")
    mine = sorted((e for e in log if e["host"] == host.name and e["ua"] != solo_agent
                   and e["path"] != "/robots.txt"), key=lambda e: e["t"])
    gaps = [b["t"] - a["t"] for a, b in zip(mine, mine[1:], strict=False)]
    by_role = Counter(roles.get(e["client"], e["client"]) for e in mine)
    closest = min(gaps) if gaps else None
    check.note(f"{len(mine)} requests from " + ", ".join(f"{r} {n}" for r, n in
                                                         sorted(by_role.items()))
               + (f"; closest two {closest:.3f} s apart" if closest is not None else ""),
               closest is not None and closest >= host.crawl_delay - 0.05)
    return check
