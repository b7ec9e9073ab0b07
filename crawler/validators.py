"""Field validators for crawl-management rows: thin wrappers over the pure parsers.

Each raises ``ValidationError`` with a message that names the bad line (and column where the
parser knows it), so the admin can show exactly what to fix. The checks themselves live in
``crawler.core`` (site rules, scrapers, page rules), so a crawl parses exactly what was validated.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError

from crawler.core.archive.source import WARC_SUFFIXES, confined
from crawler.core.definition.crawl import DEFAULT_FILE_TYPES, KNOWN_FILE_TYPES
from crawler.core.definition.siterules import site_rule_errors
from crawler.core.definition.sleep import SleepWindow, SleepWindowError
from crawler.core.processing import page_rules, scrapers
from crawler.core.processing.builtin_scrapers import BUILTIN_NAMES, builtin_scraper
from crawler.core.processing.errors import PageRuleSyntaxError, ScraperConfigError

DEFAULT_FILE_TYPES_TEXT = " ".join(DEFAULT_FILE_TYPES)


def parse_file_types(text: str) -> tuple[str, ...]:
    items = [t.strip().lower().lstrip(".") for t in re.split(r"[\s,]+", text) if t.strip()]
    unknown = [t for t in items if t not in KNOWN_FILE_TYPES]
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise ValidationError(
            f"Unknown file type{plural}: {', '.join(unknown)}. "
            f"Known: {', '.join(KNOWN_FILE_TYPES)}."
        )
    return tuple(dict.fromkeys(items))


def validate_file_types(text: str) -> None:
    parse_file_types(text)


MAX_LINE_ERRORS = 20  # bad lines a form names one by one; more are counted


def line_errors(messages: list[str]) -> ValidationError:
    """One form error per bad line (the first MAX_LINE_ERRORS, then how many more), so that
    a pasted block is fixed in one go instead of one line per submit."""
    shown = messages[:MAX_LINE_ERRORS]
    if len(messages) > MAX_LINE_ERRORS:
        shown.append(f"... and {len(messages) - MAX_LINE_ERRORS} more bad lines.")
    return ValidationError(shown)


def validate_site_rules(text: str) -> None:
    """Every line that is not a site rule is named (:func:`line_errors`)."""
    errors = site_rule_errors(text)
    if errors:
        raise line_errors([str(exc) for exc in errors])


def validate_disallowed_sites(text: str) -> None:
    """Site rules, or quotas ``rule#N`` (Yioop's ``site#quota``); every bad line named."""
    errors = site_rule_errors(text, quotas=True)
    if errors:
        raise line_errors([str(exc) for exc in errors])


def validate_sleep_window(text: str) -> None:
    """``HH:MM-HH:MM`` or empty (:class:`crawler.core.definition.sleep.SleepWindow`)."""
    try:
        SleepWindow.parse(text)
    except SleepWindowError as exc:
        raise ValidationError(str(exc)) from None


def _scraper_check(check: Callable[[str], object], text: str) -> object:
    """Run one of crawler.core.processing.scrapers' checks; the message names the line."""
    try:
        return check(text)
    except ScraperConfigError as exc:
        where = f"line {exc.line}: " if exc.line else ""
        raise ValidationError(f"{where}{exc.message}") from None


def validate_xpath(expr: str) -> None:
    _scraper_check(scrapers.validate_xpath_field, expr)


def validate_xpath_lines(text: str) -> None:
    _scraper_check(scrapers.validate_xpath_lines, text)


def validate_scraper_signature(text: str) -> None:
    _scraper_check(scrapers.validate_signature, text)


def parse_extract_fields(text: str) -> tuple[tuple[str, str], ...]:
    """``FIELD=xpath`` or ``FIELD:=literal`` per line -> ((field, xpath or ':=literal'), ...)."""
    return _scraper_check(scrapers.parse_extract_fields, text)  # type: ignore[return-value]


def validate_extract_fields(text: str) -> None:
    parse_extract_fields(text)


def parse_meta_words(text: str) -> tuple[tuple[str, str], ...]:
    """``prefix=xpath`` or ``prefix:=literal`` per line -> ((prefix, xpath or ':=literal'),
    ...); the prefix must be one the query parser reads."""
    return _scraper_check(scrapers.parse_meta_words, text)  # type: ignore[return-value]


def validate_meta_words(text: str) -> None:
    parse_meta_words(text)


def validate_builtin_scraper_names(names: object) -> None:
    """A list of built-in scraper names (``crawler.core.processing.builtin_scrapers``)."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValidationError("A list of built-in scraper names is expected.")
    unknown = [n for n in names if builtin_scraper(n) is None]
    if unknown:
        raise ValidationError(f"Unknown built-in scraper: {', '.join(unknown)}. "
                              f"Known: {', '.join(BUILTIN_NAMES)}.")


def validate_page_rules(text: str) -> None:
    """Check page rules with the parser the fetchers use; the message gives line and column."""
    if not text.strip():
        return
    try:
        page_rules.parse_rules(text)
    except PageRuleSyntaxError as exc:
        raise ValidationError(f"Page rules: {exc}") from None


def archive_path_errors(path: str) -> str:
    """Why ``path`` cannot be an archive crawl's WARC source (an empty string when it can):
    an absolute path, inside one of the folders of ``ARCHIVE_ROOTS``, of a .warc or .warc.gz
    file or of a folder. Cheap enough for a web request: nothing outside the roots is looked
    at (the answer is the same whether such a path exists or not), and a folder is not
    searched here; the queue server lists its WARC files when the crawl starts."""
    if not path or not Path(path).is_absolute():
        return "Give the absolute path of a WARC file (.warc, .warc.gz) or of a folder of them."
    real = confined(path, settings.ARCHIVE_ROOTS)
    if real is None:
        roots = ", ".join(str(root) for root in settings.ARCHIVE_ROOTS) or "(none)"
        return (f"Archive crawls read only files inside ARCHIVE_ROOTS: {roots}. Put or link "
                "the WARC files there, or add their folder to ARCHIVE_ROOTS.")
    if real.is_dir():
        return ""
    if not real.exists():
        return f"{path} does not exist (on this machine)."
    if not real.is_file() or not real.name.endswith(WARC_SUFFIXES):
        return f"{path} is not a .warc or .warc.gz file, nor a folder."
    return ""
