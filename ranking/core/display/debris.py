"""Markup debris in stored page text, removed from snippets.

Layer: ``ranking.core`` (pure Python), used by :mod:`ranking.core.display.snippets` on the few hundred
characters around a query word, never on a whole page: the work is bounded by the snippet's
length, not the page's.

What a page's extracted text carries that no reader wants in a snippet:

* permalink glyphs that documentation generators put after every heading (Sphinx's ``¶``,
  MkDocs' and some themes' ``§`` link anchors are not removed: ``§`` is also real text), the
  private-use link icons of icon fonts, and zero-width characters;
* navigation and sidebar labels: Sphinx's "Previous topic", "Next topic", "This Page",
  "Show Source", "Quick search", "Navigation", "Table of Contents", its relbar
  "index | modules | next | previous", "Enter search terms or a module, class or function
  name.", "Created using Sphinx x.y"; generic "Skip to content", "Toggle navigation",
  "Edit on GitHub", "Back to top";
* breadcrumb trails: runs of a few words each followed by ``»`` or ``›``
  ("Flask Documentation (2.2.x) » Quickstart");
* a phrase written twice in a row (a heading right after the same words in a breadcrumb, as
  "Quickstart Quickstart").

:func:`clean` removes the first three, except where the removed text holds a query word (a
page about navigation keeps its word "navigation": a snippet shows a query word whenever it
can); :func:`collapse_repeats` the last, on a snippet's windows only.
"""

from __future__ import annotations

import functools
import operator
import re

# glyphs removed outright: pilcrow, the icon-font private-use link icons (Font Awesome's
# link, Octicons' link), zero-width spaces and joiners, the BOM
_GLYPHS = "\u00b6\uf0c1\uf08e\U000f0337\u200b\u200c\u200d\u2060\ufeff"
_LABELS = (
    "Previous topic", "Next topic", "Previous page", "Next page", "This Page", "Show Source",
    "Quick search", "Quick links", "Table of Contents", "Table Of Contents",
    "Navigation", "Enter search terms or a module, class or function name.",
    "Skip to content", "Skip to main content", "Toggle navigation", "Edit on GitHub",
    "Back to top", "Report a Bug", "Permalink to this headline", "Permalink to this heading",
    "Permalink to this definition", "Permalink to this table", "Permalink to this code",
)
_RELBAR_WORDS = r"(?:index|modules|next|previous|toc|contents|up|home)"
_RELBAR = re.compile(
    # the relbar: at least two of its words separated by "|" (or just spaces after "index")
    r"(?<!\w)" + _RELBAR_WORDS + r"(?:\s*\|\s*|\s+)" + _RELBAR_WORDS
    + r"(?:\s*\|\s*" + _RELBAR_WORDS + r")+(?:\s*\|)?(?!\w)", re.IGNORECASE)
_SPHINX = re.compile(r"Created using Sphinx(?: [\d.]+)?\.?")
_CRUMB_WORDS = 6  # words of one breadcrumb at most
_GUILLEMET = re.compile("[\u00bb\u203a]")
_CRUMB_END = re.compile(r"[.!?:;|]\s")  # where the text before a breadcrumb trail ends
# the same run of one to eight words twice in a row ("Quickstart Quickstart"); possessive
# within a word (a word is followed by space or the end, so giving characters back never helps)
_REPEAT = re.compile(r"(?<!\w)((?:\w[\w.()'-]*+\s++){0,7}\w[\w.()'-]*+)\s+\1(?!\w)")
_RUN = re.compile(r"\w+")


def clean(text: str, keep: re.Pattern[str] | None = None) -> str:
    """``text`` without permalink glyphs, navigation labels and breadcrumbs, white space
    collapsed. Debris that holds a match of ``keep`` (the query words' pattern) stays. Each
    kind of debris is looked for only when a plain substring test finds its mark (a glyph,
    ``|``, a guillemet, a label): most text has none, and the regexes cost more than the
    tests."""
    for glyph in _GLYPHS:
        if glyph in text:
            text = text.replace(glyph, "")

    def drop(match: re.Match[str]) -> str:
        found = match.group(0)
        return found if keep is not None and keep.search(found) else " "

    if "|" in text and any(word in text.lower() for word in ("next", "previous", "modules")):
        text = _RELBAR.sub(drop, text)
    if "\u00bb" in text or "\u203a" in text:
        text = _drop_crumbs(text, keep)
    # case-sensitive: "This Page" is a sidebar's label, "This page" a sentence's start
    labels = tuple(label for label in _LABELS if label in text)
    if labels:
        text = _labels(labels).sub(drop, text)
    if "Created using Sphinx" in text:
        text = _SPHINX.sub(drop, text)
    return " ".join(text.split()).strip(" |")


@functools.lru_cache(maxsize=64)
def _labels(labels: tuple[str, ...]) -> re.Pattern[str]:
    """The pattern of the navigation labels found in a text (a few: one alternation of all
    of them costs a try of every label at every character)."""
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, labels)) + r")(?!\w)")


def _drop_crumbs(text: str, keep: re.Pattern[str] | None) -> str:
    """``text`` without breadcrumbs: the words (at most ``_CRUMB_WORDS``, back to a sentence's
    end) before each guillemet, and the guillemet; a crumb holding a query word keeps its
    words. A loop over the guillemets, not a regex: one backtracks over every word."""
    out: list[str] = []
    last = 0
    for found in _GUILLEMET.finditer(text):
        at = found.start()
        segment = text[last:at]
        words = segment.rstrip().split(" ")
        start = max(0, len(words) - _CRUMB_WORDS)
        for end in _CRUMB_END.finditer(segment):  # never back past a sentence's end
            start = max(start, len(segment[:end.end()].split(" ")) - 1)
        crumb = " ".join(words[start:])
        if keep is not None and keep.search(crumb):
            out.append(segment)
        else:
            out.append(" ".join(words[:start]))
        out.append(" ")
        last = at + 1
    out.append(text[last:])
    return "".join(out)


def collapse_repeats(text: str) -> str:
    """``text`` with a run of up to eight words written twice in a row kept once. Meant for
    snippet-sized text (the pattern tries every word count at every word), and tried only on
    a text that can hold a repeat: the runs of word characters of the two copies are the same
    and follow each other (each copy's first run begins the copy, its last one ends it, and
    only space is between them), so the text's runs hold a sequence written twice in a row,
    which makes two equal runs side by side or a pair of runs written twice. Most text has
    neither, and is returned after a ``findall`` and two set builds; the pattern runs only
    where such a sequence is found."""
    runs = _RUN.findall(text)
    if len(set(runs)) == len(runs):
        return text
    pairs = list(zip(runs, runs[1:], strict=False))
    if len(set(pairs)) == len(pairs) and not any(map(operator.eq, runs, runs[1:])):
        return text
    seen: dict[str, list[int]] = {}
    for j, run in enumerate(runs):  # a sequence written twice in a row, exactly
        earlier = seen.setdefault(run, [])
        for i in earlier:
            if runs[i:j] == runs[j:2 * j - i]:
                return _REPEAT.sub(r"\1", text)
        earlier.append(j)
    return text
