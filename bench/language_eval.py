"""Accuracy of language guessing over the Debian Reference manual's translations.

Every Debian Reference page ``*.<lang>.html`` (packages debian-reference-en, -de,
-es, -fr, -it, -ja, -pt, -zh-cn, -zh-tw) goes through the HTML processor twice:

* ``served``: under the URL the local web serves it at
  (``https://www.debian.org/doc/manuals/debian-reference/ch01.fr.html``): the full rule order
  (declared tags, charset, URL, text test);
* ``text``: under a URL that says nothing (``.../page.html``): the seed's text test alone
  (the pages declare no language, so this measures deleting each language's frequent words).

Prints accuracy, the processing time and the language test's own CPU time per page
(``guess_language``, the rules above on the page's text sample) and a confusion table for each,
then one ``target:`` line per mode (accuracy, goal 96%) and one for the language test's time
(goal at most 5 ms a page in either mode; issue 34).
When translations are missing it fetches their packages without installing them (see
:func:`page_folder`). Usage: ``.venv/bin/python bench/language_eval.py``
"""

from __future__ import annotations

import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import crawler.core.processing.processors.html as html_processor  # noqa: E402
from crawler.core.processing.config import PageProcessingConfig  # noqa: E402
from crawler.core.processing.page import FetchedPage  # noqa: E402
from crawler.core.processing.process import PageProcessor  # noqa: E402

DOC_DIR = "/usr/share/debian-reference"
LANGS = ["en", "de", "es", "fr", "it", "ja", "pt", "zh-cn", "zh-tw"]
LABELS = {"zh-cn": "zh-CN", "zh-tw": "zh-TW"}
PREFIX = "https://www.debian.org/doc/manuals/debian-reference/"
CACHE_DIR = os.path.join(os.path.expanduser("~"), ".cache", "yioopy-language-eval")
TARGET = 0.96
TARGET_GUESS_MS = 5.0  # the language test's CPU time per page (issue 34)
_PAGE = re.compile(r"^(?P<stem>.+)\.(?P<lang>[a-z]{2}(?:-[a-z]{2})?)\.html$")


def page_folder() -> str:
    """A folder holding every language's Debian Reference pages, without installing them.

    The translations are not installed: ``/usr/share/debian-reference`` is also the local web's
    copy of the manual (its default tier serves that folder), and installed translations would
    add pages in eight languages to every crawl of the tier. When the installed folder lacks a
    language, each missing package is fetched with ``apt-get download`` (no root needed) into
    CACHE_DIR and unpacked there with ``dpkg-deb -x``; the pages are read from that copy."""
    if all(glob.glob(os.path.join(DOC_DIR, f"*.{lang}.html")) for lang in LANGS):
        return DOC_DIR
    cached = os.path.join(CACHE_DIR, DOC_DIR.lstrip("/"))
    missing = [lang for lang in LANGS if not glob.glob(os.path.join(cached, f"*.{lang}.html"))]
    if missing:
        if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
            raise SystemExit("the Debian Reference translations are missing and apt-get is not "
                             "here to fetch them")
        debs = os.path.join(CACHE_DIR, "debs")
        os.makedirs(debs, exist_ok=True)
        packages = [f"debian-reference-{lang}" for lang in missing]
        print(f"fetching (not installing): {' '.join(packages)}", file=sys.stderr)
        subprocess.run(["apt-get", "download", "-q", *packages], check=True, cwd=debs,
                       stdout=subprocess.DEVNULL)
        for name in sorted(os.listdir(debs)):
            if name.endswith(".deb"):
                subprocess.run(["dpkg-deb", "-x", os.path.join(debs, name), CACHE_DIR],
                               check=True)
    return cached


def same_language(guess: str, truth: str) -> bool:
    if truth.startswith("zh"):
        return guess == truth
    return guess.split("-")[0] == truth


class GuessTimer:
    """Wraps the HTML processor's ``guess_language`` so that its CPU time adds up in
    ``seconds`` (restored by :meth:`close`)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._original = html_processor.guess_language

        def timed(**kwargs):  # the processor passes keywords only
            start = time.process_time()
            try:
                return self._original(**kwargs)
            finally:
                self.seconds += time.process_time() - start

        html_processor.guess_language = timed

    def close(self) -> None:
        html_processor.guess_language = self._original


def main() -> None:
    folder = page_folder()
    pages = []
    for path in sorted(glob.glob(os.path.join(folder, "*.html"))):
        match = _PAGE.match(os.path.basename(path))
        if match is None or match.group("lang") not in LANGS:
            continue
        with open(path, "rb") as handle:
            pages.append((match.group("stem"), match.group("lang"), handle.read()))
    processor = PageProcessor(PageProcessingConfig())
    print(f"pages: {len(pages)} pages")
    targets: list[str] = []
    slowest_guess = 0.0
    for mode in ("served", "text"):
        confusion: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter)
        correct = 0
        timer = GuessTimer()
        start = time.process_time()
        for stem, lang, body in pages:
            name = f"{stem}.{lang}.html" if mode == "served" else "page.html"
            page = processor.process(FetchedPage(PREFIX + name, body, 200,
                                                 {"Content-Type": "text/html"}))
            truth = LABELS.get(lang, lang)
            guess = page.lang
            correct += same_language(guess, truth)
            confusion[truth][truth if same_language(guess, truth) else guess] += 1
        elapsed = time.process_time() - start
        timer.close()
        accuracy = correct / len(pages)
        guess_ms = 1000 * timer.seconds / len(pages)
        slowest_guess = max(slowest_guess, guess_ms)
        print(f"{mode}_accuracy: {100 * accuracy:.1f} %")
        print(f"{mode}_time: {1000 * elapsed / len(pages):.1f} ms/page (whole processing)")
        print(f"{mode}_language_test_time: {guess_ms:.2f} ms/page")
        guessed = sorted({g for row in confusion.values() for g in row})
        width = max(6, *(len(g) for g in guessed))
        print(f"{mode}_confusion (rows: truth, columns: guess)")
        print("  " + "truth".ljust(7) + "".join(g.rjust(width + 1) for g in guessed))
        for truth in (LABELS.get(lang, lang) for lang in LANGS):
            row = confusion.get(truth, collections.Counter())
            print("  " + truth.ljust(7) + "".join(str(row.get(g, 0)).rjust(width + 1)
                                                 for g in guessed))
        met = "met" if accuracy >= TARGET else "NOT met"
        targets.append(f"target: language accuracy, {mode} {100 * accuracy:.1f}% "
                       f"(goal >= {100 * TARGET:.0f}%) {met}")
    met = "met" if slowest_guess <= TARGET_GUESS_MS else "NOT met"
    targets.append(f"target: language test time {slowest_guess:.2f} ms/page "
                   f"(goal <= {TARGET_GUESS_MS:.0f}) {met}")
    for line in targets:
        print(line)


if __name__ == "__main__":
    main()
