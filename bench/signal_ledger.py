"""The signal ledger of ``bench/relevance_eval.py`` (issue 36, item 3) and its per-kind tables.

For each default-on signal of the ranking, the dev MRR@10 with that signal turned off, the
local web as it is and with its index pages hidden (:mod:`relevance_modes`). A signal is turned
off at query time where a Search Time option (Page Options) holds it, so the ledger searches
the mode's cached crawl again and does not crawl per signal. A signal decided when pages are
processed (the headings' region weight, the index-entry context of a link's anchor text, the
indexing plugins) is build-time only: it is measured once per mode, by one more cached crawl
with that page processing option changed. A signal pays when turning it off lowers MRR@10 by
at least :data:`PAYS` in one of the modes. An opt-in signal (off by default) is measured the
other way round, turned on (none is, since the sections plugin became a display that changes
no ranking: it has a row without figures, :data:`UNMEASURED`).
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
    opt_in: bool = False  # off by default: ``off`` turns it on, and its gain is on - default

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
    # issue 36, round three: what the page defines (defines: keys) and its headings and
    # defined terms (topic: keys), matched whole against the query
    Signal("definition bonus (defined names)", QUERY, {"definition_bonus": 0.0}),
    Signal("topic bonus (headings, defined terms)", QUERY, {"topic_bonus": 0.0}),
    Signal("indexing plugins (API names, topics, sections)", BUILD, {"indexing_plugins": ()},
           "-noplugins"),
)
# signals with no row of figures, named so the ledger says why
UNMEASURED = (
    ("classifier weight", "no classifier weighs in by default (classifier_weights = ())"),
    ("semantic signal", "off by default (semantic_weight = 0; docs/semantic.md)"),
    ("sections plugin", "on by default, ranks nothing: links a result to the sections whose "
                        "headings hold the query (ranking.core.display.sections)"),
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


def gain(entry: Entry, mode: str, base: Mapping[str, float]) -> float | None:
    """What the signal adds to MRR@10 in ``mode``: the defaults' minus the figure with it off
    (for an opt-in signal: the figure with it on minus the defaults')."""
    value = entry.off.get(mode)
    if value is None:
        return None
    return value - base[mode] if entry.signal.opt_in else base[mode] - value


def pays(entry: Entry, base: Mapping[str, float]) -> bool:
    """True when the signal adds at least :data:`PAYS` to MRR@10 in one of the modes."""
    return any((g := gain(entry, mode, base)) is not None and g >= PAYS for mode in entry.off)


def ledger_lines(entries: Sequence[Entry], base: Mapping[str, float]) -> list[str]:
    """The ``name: value unit`` lines of the ledger and its markdown table."""
    modes = list(base)
    lines = []
    for entry in entries:
        for mode, value in entry.off.items():
            if value is not None:
                state = "on" if entry.signal.opt_in else "off"
                lines.append(f"ledger_{entry.signal.slug}_{state}_MRR@10_{mode}: {value:.4f} score "
                             f"(delta {value - base[mode]:+.4f}, {entry.signal.when}-time)")
    head = "| signal | switched at | " + " | ".join(
        f"{m} MRR@10 off (on {base[m]:.4f}) | {m} gain" for m in modes) + " | pays |"
    lines += ["", "signal ledger (dev MRR@10 with the signal off, an opt-in one on; gain = what "
              "the signal adds):", head,
              "|" + "---|" * (3 + 2 * len(modes))]
    for entry in entries:
        cells = []
        for mode in modes:
            value, worth = entry.off.get(mode), gain(entry, mode, base)
            cells += ["n/a", "n/a"] if value is None or worth is None else [
                f"{value:.4f}{' (on)' if entry.signal.opt_in else ''}", f"{worth:+.4f}"]
        lines.append(f"| {entry.signal.name} | {entry.signal.when} time | " + " | ".join(cells)
                     + f" | {'yes' if pays(entry, base) else 'NO'} |")
    for name, why in UNMEASURED:
        lines.append(f"| {name} | - | " + " | ".join(["-", "-"] * len(modes)) + f" | {why} |")
    return lines + [""]
