"""The queue server's near-duplicate gate (crawler.core.queue_server.near_duplicates): links
found on a near-duplicate page are left out, the first page of a pair keeps its links, and the
fetches saved are the left-out urls never visited."""

from __future__ import annotations

from crawler.core.queue_server.near_duplicates import NearDuplicateGate
from crawler.core.scheduler import DiscoveredUrl
from crawler.core.transport.visits import Outcome, Visit

BASE = 0x0F0F_1234_5678_9ABC


def visit(url: str, simhash: int, outcome: Outcome = Outcome.NEW, tag: int = 0) -> Visit:
    return Visit(url, outcome, 200, simhash=simhash, title_tag=tag)


def found(url: str, source: str) -> DiscoveredUrl:
    return DiscoveredUrl(url, 1, 0, source_url=source)


def test_links_of_a_near_duplicate_are_left_out() -> None:
    gate = NearDuplicateGate(3)
    counters: dict[str, int] = {}
    first, twin = "https://a.example/v1/x.html", "https://a.example/v2/x.html"
    discovered = [found("https://a.example/v1/y.html", first),
                  found("https://a.example/v2/y.html", twin),
                  found("https://a.example/v2/z.html", twin)]
    kept = gate.screen([visit(first, BASE), visit(twin, BASE ^ 0b101)], discovered, counters)
    assert [d.url for d in kept] == ["https://a.example/v1/y.html"]
    assert counters == {"near_duplicate_pages": 1, "near_duplicate_links_skipped": 2}
    # a later batch's links from the same near-duplicate are left out too
    later = gate.screen([], [found("https://a.example/v2/w.html", twin)], counters)
    assert later == [] and counters["near_duplicate_links_skipped"] == 3
    # v2/y.html is visited after all (another page linked it): not a fetch saved
    gate.screen([visit("https://a.example/v2/y.html", BASE ^ (0xFFFF << 20))], [], counters)
    assert gate.fetches_saved() == 2
    assert set(gate.near_duplicates()) == {twin}


def test_far_pages_unchanged_revisits_and_no_fingerprint_keep_their_links() -> None:
    gate = NearDuplicateGate(3)
    counters: dict[str, int] = {}
    visits = [visit("https://a.example/1", BASE),
              visit("https://a.example/2", BASE ^ 0xFF),                  # 8 bits away
              visit("https://a.example/3", BASE, Outcome.UNCHANGED),      # not indexed now
              visit("https://a.example/4", 0),                            # no fingerprint
              visit("https://a.example/1", BASE)]                         # itself again
    discovered = [found(f"https://a.example/{i}/next", f"https://a.example/{i}")
                  for i in range(1, 5)]
    assert gate.screen(visits, discovered, counters) == discovered
    assert counters == {}


def test_off_gate_keeps_everything() -> None:
    gate = NearDuplicateGate(-1)
    counters: dict[str, int] = {}
    discovered = [found("https://a.example/b/next", "https://a.example/b")]
    kept = gate.screen([visit("https://a.example/a", BASE), visit("https://a.example/b", BASE)],
                       discovered, counters)
    assert kept == discovered and counters == {} and not gate.enabled


def test_pages_with_other_title_keys_are_not_near_duplicates() -> None:
    gate = NearDuplicateGate(3)
    counters: dict[str, int] = {}
    discovered = [found("https://a.example/skipwhile/next", "https://a.example/skipwhile")]
    kept = gate.screen([visit("https://a.example/takewhile", BASE, tag=1),
                        visit("https://a.example/skipwhile", BASE ^ 1, tag=2)],
                       discovered, counters)
    assert kept == discovered and counters == {}


def test_a_visit_round_trips_its_simhash_and_title_tag() -> None:
    row = visit("https://a.example/", BASE, tag=12345).to_wire()
    assert Visit.from_wire(row).simhash == BASE and Visit.from_wire(row).title_tag == 12345
    assert Visit.from_wire(row[:11]).simhash == 0  # a fetcher from before near-duplicates
