"""bench/relevance_eval.py's two modes and its signal ledger (issue 36): the hidden copy of
the local web's generated nginx config that bench/relevance_modes.py runs (the hide line, its
own addresses and runtime folder), the ledger's table and its "pays" rule, and the per-mode
targets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import relevance_modes as rm  # noqa: E402
import relevance_report as rr  # noqa: E402
import signal_ledger as sl  # noqa: E402

# two HTTPS servers as gen_config.py writes them (one already hidden by setup.sh)
SERVER = """  server {{
    listen 127.0.0.{n}:443 ssl;
    server_name host{n};
    root /srv/host{n};
    location = / {{ try_files /index.html =404; }}
{hide}    location = /robots.txt {{ default_type text/plain; }}
  }}"""
PLAIN = SERVER.format(n=11, hide="")
HIDDEN = SERVER.format(n=12, hide=rm.HIDE_LINE + "\n")


def test_hide_adds_one_marked_line_per_server() -> None:
    text = "http {\n" + PLAIN + "\n" + SERVER.format(n=13, hide="") + "\n}\n"
    hidden = rm.hide_config(text)
    added = [line for line in hidden.split("\n") if line not in text.split("\n")]
    assert added == [rm.HIDE_LINE + rm.MARK] * 2
    lines = hidden.split("\n")
    for i, line in enumerate(lines):
        if line == rm.ANCHOR:
            assert lines[i + 1] == rm.HIDE_LINE + rm.MARK
    assert rm.hide_config(hidden) == hidden  # twice is once
    assert [line for line in lines if not line.endswith(rm.MARK)] == text.split("\n")


def test_a_server_setup_sh_hid_is_left_as_it_is() -> None:
    text = PLAIN + "\n" + HIDDEN
    hidden = rm.hide_config(text)
    assert hidden.count(rm.HIDE_LINE) == 2 and hidden.count(rm.MARK) == 1


def test_the_private_copy_moves_addresses_and_runtime_paths_only() -> None:
    text = (f"pid {rm.SHARED_RUN}/nginx.pid;\nhttp {{\n  access_log {rm.SHARED_RUN}/access.log;"
            "\n  server {\n    listen 127.0.0.11:80;\n    server_name host11;\n  }\n"
            + PLAIN + "\n" + HIDDEN + "\n}\n")
    copy, hosts = rm.private_config(text)
    assert hosts == {"host11": "127.0.1.11", "host12": "127.0.1.12"}
    assert "127.0.0." not in copy and rm.SHARED_RUN not in copy
    assert f"pid {rm.RUN}/nginx.pid;" in copy and "listen 127.0.1.11:443 ssl;" in copy
    assert copy.count(rm.HIDE_LINE) == 2
    back = copy.replace("127.0.1.", "127.0.0.").replace(str(rm.RUN), rm.SHARED_RUN)
    assert back == rm.hide_config(text)  # nothing else changed


def test_each_mode_has_its_own_crawl_cache() -> None:
    assert set(rm.VARIANT) == set(rm.MODES) and len(set(rm.VARIANT.values())) == len(rm.MODES)
    variants = [s.variant for s in sl.SIGNALS if s.when == sl.BUILD]
    assert all(variants) and len(set(variants)) == len(variants)
    assert all(not s.variant for s in sl.SIGNALS if s.when == sl.QUERY)


def test_ledger_table_marks_what_pays() -> None:
    proximity, phrases = sl.SIGNALS[7], sl.SIGNALS[8]
    base = {"as-is": 0.90, "hidden": 0.87}
    entries = sl.measure(list(base), lambda mode, s: {
        ("as-is", "proximity"): 0.85, ("hidden", "proximity"): 0.88,
        ("as-is", "common phrases"): 0.898, ("hidden", "common phrases"): 0.869}[
        (mode, s.name)], [proximity, phrases])
    assert sl.pays(entries[0], base) and not sl.pays(entries[1], base)
    lines = sl.ledger_lines(entries, base)
    assert "ledger_proximity_off_MRR@10_as-is: 0.8500 score (delta -0.0500, query-time)" in lines
    rows = [line for line in lines if line.startswith("| proximity")]
    assert rows == ["| proximity | query time | 0.8500 | +0.0500 | 0.8800 | -0.0100 | yes |"]
    assert any(line.startswith("| common phrases") and line.endswith("| NO |")
               for line in lines)
    assert any(line.startswith("| classifier weight | -") for line in lines)


def test_hidden_targets_hold_each_kind_to_whoosh() -> None:
    kinds = {"all": {"MRR@10": 0.92}, "concept": {"MRR@10": 0.74}, "sql": {"MRR@10": 0.9}}
    whoosh = {"and": {"MRR@10": 0.78}, "kinds": {"all": {"MRR@10": 0.78},
                                                 "concept": {"MRR@10": 0.5},
                                                 "sql": {"MRR@10": 0.95}}}
    mean = {"MRR@10": 0.92, "S@10": 0.97, "no_result": 0.0}
    targets = {name: met for name, _, _, met in
               rr.mode_targets("hidden", mean, kinds, {"whoosh": whoosh})}
    assert targets["MRR@10"] and targets["queries without a result"]
    assert not targets["MRR@10 concept"]
    assert targets["MRR@10 concept against whoosh AND"]
    assert not targets["MRR@10 sql against whoosh AND"]
    as_is = {name: met for name, _, _, met in rr.mode_targets("as-is", mean, kinds, {})}
    assert not as_is["MRR@10"] and "MRR@10 concept" not in as_is


def test_an_opt_in_signal_is_measured_turned_on() -> None:
    sections = sl.Signal("sections (opt-in plugin)", sl.BUILD, {"indexing_plugins": (
        "crawler.core.processing.plugins.sections.SectionsPlugin",)}, "-sections", True)
    assert not any(s.opt_in for s in sl.SIGNALS)  # none today: the mechanism stays
    base = {"as-is": 0.90, "hidden": 0.87}
    entry = sl.measure(list(base), lambda mode, s: {"as-is": 0.91, "hidden": 0.86}[mode],
                       [sections])[0]
    assert sl.gain(entry, "as-is", base) == pytest.approx(0.01)
    assert sl.gain(entry, "hidden", base) == pytest.approx(-0.01)
    assert sl.pays(entry, base)
    row = next(line for line in sl.ledger_lines([entry], base) if line.startswith("| sections"))
    assert "0.9100 (on) | +0.0100" in row and row.endswith("| yes |")
    assert "ledger_sections__opt_in_plugin_on_MRR@10_as-is: 0.9100 score (delta +0.0100, " \
           "build-time)" in sl.ledger_lines([entry], base)
