"""Errors of the page-processing layer (``crawler.core``).

Page processors never raise on hostile page content: a page that cannot be read becomes a
:class:`~crawler.core.processing.page.ProcessedPage` whose ``errors`` say why. These exceptions are
for configuration (rules and scrapers the admin types in) and for programming errors.
"""

from __future__ import annotations


class PageProcessingError(Exception):
    """Base class of page-processing errors."""


class UnprocessablePageError(PageProcessingError):
    """The input is not a page at all (for example a body that is not bytes)."""


class ConfigError(PageProcessingError, ValueError):
    """A page-processing option is invalid (unknown summarizer, negative byte range...)."""


class PageRuleSyntaxError(ConfigError):
    """A page rule does not parse. ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int, text: str = "") -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column
        self.text = text


class ScraperConfigError(ConfigError):
    """A scraper field is invalid: ``field`` names it, ``line`` is 1-based (0: whole field)."""

    def __init__(self, message: str, field: str, line: int = 0) -> None:
        where = f"{field}, line {line}" if line else field
        super().__init__(f"{where}: {message}")
        self.message = message
        self.field = field
        self.line = line
