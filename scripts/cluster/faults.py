"""``--faults``: a second crawl of the same sites while machines fail, which must still end
with the undisturbed crawl's url set.

While it runs: the ``fetch`` node is unplugged (its bridge port down) and plugged back 20 s
later; every process of ``qs1`` is killed with -9 (``ip netns pids``: all of them, its web
server, workers, queue server and dictionary updater) and ``manage.py up`` is started there
again 10 s later; meanwhile the search page on ``web`` must answer from ``qs0`` alone, marked
partial; then Redis is stopped for 20 s and started again on its append-only file.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from . import checks
from .engine import ROLES

if TYPE_CHECKING:
    from scripts.cluster_test import Run

    from .admin_client import Admin

QS1 = next(r for r in ROLES if r.name == "qs1")


class Disturb:
    def __init__(self, run: Run, admin: Admin, searched_timestamp: int) -> None:
        self.run, self.admin, self.its = run, admin, searched_timestamp
        self.check = checks.Check("faults: fetch unplugged, qs1 killed -9, Redis stopped 20 s")
        self.partial = checks.Check("while qs1 is down, the search page answers from qs0, "
                                    "marked partial")

    def running(self, crawl_id: int) -> str:
        return self.admin.status(crawl_id)["status"]

    def __call__(self, crawl_id: int) -> None:
        run, net = self.run, self.run.net
        time.sleep(3)
        net.cut("fetch")
        run.lap(f"fetch unplugged (crawl {self.running(crawl_id)})")
        time.sleep(3)
        killed = net.kill_all("qs1")
        run.procs.forget("qs1-up")
        run.lap(f"qs1: kill -9 of its {len(killed)} processes (crawl {self.running(crawl_id)})")
        self.search_while_down()
        time.sleep(max(0.0, 10 - 2))
        assert run.engine is not None
        run.engine.up(QS1)
        run.engine.wait_up(QS1)
        run.lap("qs1: manage.py up again, all processes up")
        time.sleep(max(0.0, 20 - 16))
        net.plug("fetch")
        run.lap(f"fetch plugged back (crawl {self.running(crawl_id)})")
        assert run.redis is not None
        state = self.running(crawl_id)
        run.redis.stop()
        run.lap(f"Redis stopped (crawl {state})")
        time.sleep(20)
        run.redis.start()
        run.lap("Redis started again after 20 s")
        self.check.note(f"crawl {crawl_id} was {state} when Redis was stopped",
                        state == "running")

    def search_while_down(self) -> None:
        """qs1's hosts are gone from the answers; qs0's are there, the answer marked partial."""
        time.sleep(2)
        for host in self.run.hosts:
            answer = self.admin.search(host.word, self.its)
            found = {r["url"].split("/")[2] for r in answer.get("results", [])}
            expected = {host.address} if host.shard == 0 else set()
            self.partial.note(
                f"q={host.word} ({host.name}, queue server {host.shard}): {answer.get('total')} "
                f"results, hosts {sorted(found)}, partial {answer.get('partial')}, messages "
                f"{[str(m)[:80] for m in answer.get('messages', [])]}",
                found == expected and answer.get("partial") is True)


def fault_run(run: Run, admin: Admin, calm: dict) -> list[checks.Check]:
    expected = set().union(*run.cluster_urls(calm["timestamp"]).values())
    disturb = Disturb(run, admin, calm["timestamp"])
    facts = run.crawl(admin, "cluster with faults", during=disturb, timeout=900)
    got = set().union(*run.cluster_urls(facts["timestamp"]).values())
    same = checks.Check("faults: the disturbed crawl's url set equals the undisturbed one's")
    same.note(f"{len(got)} urls after the faults, {len(expected)} undisturbed; missing "
              f"{sorted(expected - got)[:10]}, extra {sorted(got - expected)[:10]}",
              got == expected and len(got) > 0)
    same.note(f"{facts['documents_indexed']} documents indexed after the faults, "
              f"{calm['documents_indexed']} undisturbed (pages and link documents: nothing "
              "accepted was lost)", facts["documents_indexed"] >= calm["documents_indexed"])
    run.lap("fault checks")
    return [disturb.check, disturb.partial, same]
