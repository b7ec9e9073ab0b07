"""The signal ledger of ``bench/relevance_eval.py`` (issue 36, item 3) and its per-kind tables.

For each default-on signal of the ranking, the dev MRR@10 with that signal turned off, the
local web as it is and with its index pages hidden (:mod:`relevance_modes`). A signal is turned
off at query time where a Search Time option (Page Options) holds it, so the ledger searches
the mode's cached crawl again and does not crawl per signal. A signal decided when pages are
processed (the headings' region weight, the index-entry context of a link's anchor text, the
indexing plugins) is build-time only: it is measured once per mode, by one more cached crawl
with that page processing option changed. A signal pays when turning it off lowers MRR@10 by
at least :data:`PAYS` in one of the modes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

PAYS = 0.005  # the bar: a signal must be worth at least this somewhere
QUERY, BUILD = "query", "build"


@dataclass(frozen=True, slots=True)
class Signal:
    """A ranking signal and how to turn it off: ``off`` holds Search Time options
    (``when`` = query) or page processing options (``when`` = build) with their off value."""

    name: str
    when: str
    off: Mapping[str, object]
    variant: str = ""  # the cache folder suffix of a build-time signal's crawl

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "_" for c in self.name.lower()).strip("_")


# Off values: a region weight back to what any other page position weighs (the description
# weight 1 for the title, the body weight for headings), a bonus or weight to 0, a build-time
# feature not run.
SIGNALS: tuple[Signal, ...] = (
    Signal("title region weight", QUERY, {"title_weight": 1.0}),
    Signal("heading region weight", BUILD, {"heading_weight": 0.5}, "-noheading"),
    Signal("anchor text", QUERY, {"link_weight": 0.0}),
    Signal("index-entry context", BUILD, {"entry_context": False}, "-noentry"),
    Signal("title words bonus", QUERY, {"title_bonus": 0.0}),
    Signal("url words (host, path)", QUERY, {"host_keyword_bonus": 0.0, "path_bonus": 0.0}),
    Signal("url shape (root, cld, wiki, slashes)", QUERY,
           {"host_url_bonus": 0.0, "cld_url_bonus": 0.0, "wiki_bonus": 0.0,
            "num_slashes_bonus": 0.0}),
    Signal("proximity", QUERY, {"proximity_weight": 0.0}),
    Signal("common phrases", QUERY, {"common_phrase_bonus": 0.0}),
    Signal("link score", QUERY, {"link_score_weight": 0.0}),
    Signal("Doc Rank", QUERY, {"doc_rank_weight": 0.0}),
    Signal("indexing plugins (API names)", BUILD, {"indexing_plugins": ()}, "-noplugins"),
)
# default-off signals, named so the ledger says why they have no row of figures
OFF_BY_DEFAULT = (
    ("classifier weight", "no classifier weighs in by default (classifier_weights = ())"),
    ("semantic signal", "off by default (semantic_weight = 0; docs/semantic.md)"),
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One signal's MRR@10 with it off, per mode (None: not measured in that mode)."""

    signal: Signal
    off: dict[str, float | None]


def measure(modes: Sequence[str], off_mrr: Callable[[str, Signal], float | None],
            signals: Sequence[Signal] = SIGNALS) -> list[Entry]:
    """The ledger: ``off_mrr(mode, signal)`` for every signal and mode."""
    return [Entry(s, {mode: off_mrr(mode, s) for mode in modes}) for s in signals]


def pays(entry: Entry, base: Mapping[str, float]) -> bool:
    """True when turning the signal off lowers MRR@10 by at least :data:`PAYS` somewhere."""
    return any(value is not None and base[mode] - value >= PAYS
               for mode, value in entry.off.items())


def ledger_lines(entries: Sequence[Entry], base: Mapping[str, float]) -> list[str]:
    """The ``name: value unit`` lines of the ledger and its markdown table."""
    modes = list(base)
    lines = []
    for entry in entries:
        for mode, value in entry.off.items():
            if value is not None:
                lines.append(f"ledger_{entry.signal.slug}_off_MRR@10_{mode}: {value:.4f} score "
                             f"(delta {value - base[mode]:+.4f}, {entry.signal.when}-time)")
    head = "| signal | switched at | " + " | ".join(
        f"{m} MRR@10 off (on {base[m]:.4f}) | {m} gain" for m in modes) + " | pays |"
    lines += ["", "signal ledger (dev MRR@10 with the signal off; gain = on - off):", head,
              "|" + "---|" * (3 + 2 * len(modes))]
    for entry in entries:
        cells = []
        for mode in modes:
            value = entry.off.get(mode)
            cells += ["n/a", "n/a"] if value is None else [f"{value:.4f}",
                                                          f"{base[mode] - value:+.4f}"]
        lines.append(f"| {entry.signal.name} | {entry.signal.when} time | " + " | ".join(cells)
                     + f" | {'yes' if pays(entry, base) else 'NO'} |")
    for name, why in OFF_BY_DEFAULT:
        lines.append(f"| {name} | - | " + " | ".join(["-", "-"] * len(modes)) + f" | {why} |")
    return lines + [""]
