"""A short real crawl watched on its status page in headless Chromium, never reloaded (issue
39, item 6): `manage.py up` crawls a loopback site whose robots.txt asks for a delay between
fetches (so one schedule lasts several seconds); the page's "Pages fetched" counter takes
several values on the way (it jumped from 2 to the schedule's total when the schedule ended),
the rate chart draws lines of more than one point under a y axis no higher than the data need,
and the link-analysis panel, which said "has not run yet" after the automatic run at the
crawl's end until a reload, shows the finished run."""

from __future__ import annotations

import time

import pytest

from tests.browser.engine import add_crawl
from tests.browser.engine import engine as engine_up
from tests.fixtures.sites import FixtureServer, normal_site

PAGES = 24
DELAY = 0.4  # seconds between fetches (robots.txt Crawl-delay): ~10 s for the site


@pytest.fixture
def engine(tmp_path, migrated_sqlite):
    with engine_up(tmp_path, migrated_sqlite) as (base, _up):
        yield base


def snapshot(browser) -> dict:
    """What the page shows now, read in one script."""
    return browser.execute_script(r"""
        const text = (s) => { const e = document.querySelector(s); return e ? e.textContent : null; };
        const line = document.querySelector('polyline[data-series="fetched"]');
        const ticks = [...document.querySelectorAll('#crawl-chart .y-ticks text')]
            .map((t) => parseFloat(t.textContent));
        const ys = line.getAttribute('points').trim().split(/\s+/).filter(Boolean)
            .map((p) => parseFloat(p.split(',')[1]));
        const axis = document.querySelector('#crawl-chart .axes line');  // the x axis
        const top = parseFloat(document.querySelector('#crawl-chart .y-ticks line:last-of-type')
            ?.getAttribute('y1'));
        const bottom = parseFloat(axis.getAttribute('y1'));
        return {peak: ys.length ? (bottom - Math.min(...ys)) / (bottom - top) : 0,
                status: text('#crawl-status'), pages: text('[data-counter="pages-fetched"]'),
                points: line.getAttribute('points').trim(), y_top: Math.max(...ticks),
                panel: text('#crawl-link-analysis'), outcome: text('[data-la="outcome"]'),
                la_pages: text('[data-la="pages"]'), not_reloaded: window.__notReloaded === true};
    """)


def timeline(seen: list[dict]) -> list[tuple]:
    """What changed on the page, in order (for a failure's message)."""
    rows = [(s["status"], s["pages"], len(s["points"].split()), s["y_top"],
             round(s["peak"], 2), s["outcome"],
             " ".join((s["panel"] or "").split())[150:230]) for s in seen]
    return [row for i, row in enumerate(rows) if i == 0 or row != rows[i - 1]]


@pytest.mark.long
def test_a_short_crawl_moves_the_counters_chart_and_link_analysis_panel(browser, engine):
    from selenium.webdriver.common.by import By

    site = normal_site("watched", pages=PAGES, crawl_delay=DELAY, private_pages=1)
    with FixtureServer(site.route) as server:
        add_crawl(browser, engine, server.url("/"))
        browser.execute_script("window.__notReloaded = true;")
        assert "has not run" in snapshot(browser)["panel"]
        browser.find_element(By.NAME, "crawl-start").click()
        # the Start button posts; the page it answers with is the one watched from now on
        deadline = time.monotonic() + 20
        while "running" not in (snapshot(browser)["status"] or ""):
            assert time.monotonic() < deadline, "the crawl did not start"
            time.sleep(0.2)
        browser.execute_script("window.__notReloaded = true;")
        seen: list[dict] = []
        deadline = time.monotonic() + 120
        while True:
            now = snapshot(browser)
            assert now["not_reloaded"], "the page reloaded itself"
            seen.append(now)
            if now["status"] == "stopped" and now["outcome"] == "OK":
                break
            assert time.monotonic() < deadline, timeline(seen)
            time.sleep(0.25)
    running = [s for s in seen if s["status"] == "running"]
    counts = sorted({int(s["pages"]) for s in running} - {0})
    # robots.txt is not a page; the site's pages, less the disallowed one
    total = int(seen[-1]["pages"])
    assert total >= PAGES, seen[-1]
    assert len([c for c in counts if c < total]) >= 2, counts  # values between 0 and the end
    # the chart: a line of several points while the crawl ran, and at its end; its y axis
    # reaches the highest rate drawn (at most one nice step above it), not a fixed 800
    fetching = [s for s in running if int(s["pages"]) > 0]
    assert fetching and all(len(s["points"].split()) >= 2 for s in fetching), timeline(seen)
    last = seen[-1]
    assert len(last["points"].split()) >= 2, last
    # the highest rate of pages fetched reaches the upper part of the axis drawn for it
    assert last["peak"] >= 0.4, timeline(seen)
    # the link-analysis panel shows the run that followed the crawl's end, no reload
    assert "has not run" not in last["panel"]
    assert int(last["la_pages"]) >= PAGES, last
