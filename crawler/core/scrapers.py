"""Scrapers: admin-defined extractors for kinds of pages (WordPress, MediaWiki...).

Layer: ``crawler.core``. The admin validates scraper fields with :func:`validate_scraper`
(and the per-field helpers); the HTML processor compiles the crawl's scrapers once into a
:class:`ScraperSet` and, per page, applies the best match.

A scraper has:

* ``signature``: an XPath if it starts with ``/`` (it matches a page when it selects at least
  one node, or evaluates to true), else a regular expression searched in the page's HTML;
* ``priority``: among the scrapers whose signature matches, the highest wins (ties: the first);
* ``text_path``: an XPath whose first matching element becomes the text the summarizer reads;
* ``delete_paths``: XPaths (one per line / item) of elements removed from that text;
* ``extract_fields``: ``(FIELD, xpath)`` pairs (the text of the matches, joined with spaces)
  or ``(FIELD, ":=literal")`` pairs, added to the page's fields (page rules can use them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from .errors import ScraperConfigError
from .linear_regex import LinearRegexError, compile_linear

_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class ScraperConfig:
    """One scraper as configured by the admin (see module docstring)."""

    name: str
    signature: str
    priority: int = 0
    text_path: str = ""
    delete_paths: tuple[str, ...] = ()
    extract_fields: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_spec(cls, spec: Any) -> ScraperConfig:
        """From any object with the same attribute names (``crawl.ScraperSpec``)."""
        return cls(
            name=spec.name,
            signature=spec.signature,
            priority=int(spec.priority),
            text_path=spec.text_path or "",
            delete_paths=tuple(p for p in spec.delete_paths if p.strip()),
            extract_fields=tuple((str(k), str(v)) for k, v in spec.extract_fields),
        )


def compile_xpath(text: str, field: str = "xpath", line: int = 0) -> etree.XPath:
    """A compiled XPath, or :class:`ScraperConfigError` naming the field and line."""
    try:
        return etree.XPath(text.strip())
    except etree.XPathSyntaxError as exc:
        raise ScraperConfigError(f"invalid XPath {text.strip()!r} ({exc})", field, line) from None


def validate_signature(text: str) -> None:
    """A signature: XPath if it starts with ``/``, else a regular expression."""
    signature = text.strip()
    if not signature:
        raise ScraperConfigError("a signature is required", "signature")
    if signature.startswith("/"):
        compile_xpath(signature, "signature")
        return
    try:
        compile_linear(signature)
    except LinearRegexError as exc:
        raise ScraperConfigError(
            f"signature: invalid regular expression {signature!r}: {exc.message}", "signature"
        ) from None


def validate_xpath_field(text: str, field: str = "xpath") -> None:
    """An XPath field that may be empty (``text_path``)."""
    if text.strip():
        compile_xpath(text, field)


def validate_xpath_lines(text: str | Iterable[str], field: str = "delete_paths") -> None:
    """One XPath per line (or per item); blank lines are allowed."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    for number, line in enumerate(lines, start=1):
        if line.strip():
            compile_xpath(line, field, number)


def parse_extract_fields(text: str) -> tuple[tuple[str, str], ...]:
    """``FIELD=xpath`` or ``FIELD:=literal`` per line -> ``((FIELD, xpath or ':=literal'), ...)``."""
    fields = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        literal = line.find(":=")
        equals = line.find("=")
        if literal != -1 and literal < equals:
            name, value = line[:literal].strip(), ":=" + line[literal + 2 :].strip()
        elif equals != -1:
            name, value = line[:equals].strip(), line[equals + 1 :].strip()
            compile_xpath(value, "extract_fields", number)
        else:
            raise ScraperConfigError("expected FIELD=xpath or FIELD:=literal", "extract_fields",
                                     number)
        if not _FIELD_NAME.match(name):
            raise ScraperConfigError(f"{name!r} is not a field name", "extract_fields", number)
        fields.append((name, value))
    return tuple(fields)


def validate_scraper(config: ScraperConfig) -> None:
    """Check every field of a scraper; raises :class:`ScraperConfigError` on the first bad one."""
    if not config.name.strip():
        raise ScraperConfigError("a name is required", "name")
    validate_signature(config.signature)
    validate_xpath_field(config.text_path, "text_path")
    validate_xpath_lines(config.delete_paths, "delete_paths")
    for number, (name, value) in enumerate(config.extract_fields, start=1):
        if not _FIELD_NAME.match(name):
            raise ScraperConfigError(f"{name!r} is not a field name", "extract_fields", number)
        if not value.startswith(":="):
            compile_xpath(value, "extract_fields", number)


@dataclass(frozen=True, slots=True)
class CompiledScraper:
    name: str
    priority: int
    signature_xpath: etree.XPath | None
    signature_regex: Any | None  # RE2, linear in the page's length
    text_path: etree.XPath | None
    delete_paths: tuple[etree.XPath, ...]
    fields: tuple[tuple[str, etree.XPath | str], ...]

    def matches(self, doc: etree._Element, html: str) -> bool:
        if self.signature_regex is not None:
            return self.signature_regex.search(html) is not None
        assert self.signature_xpath is not None
        try:
            result = self.signature_xpath(doc)
        except etree.XPathError:
            return False
        return bool(result)


def _text_of(result: object) -> str:
    if isinstance(result, list):
        parts = []
        for item in result:
            if isinstance(item, etree._Element):
                parts.append(" ".join("".join(item.itertext()).split()))
            else:
                parts.append(" ".join(str(item).split()))
        return " ".join(p for p in parts if p)
    if isinstance(result, bool):
        return "true" if result else ""
    return " ".join(str(result).split())


class ScraperSet:
    """The crawl's scrapers, compiled once; immutable and safe to share between threads."""

    __slots__ = ("_scrapers",)

    def __init__(self, configs: Sequence[ScraperConfig] = ()) -> None:
        compiled = []
        for config in configs:
            validate_scraper(config)
            signature = config.signature.strip()
            is_xpath = signature.startswith("/")
            compiled.append(
                CompiledScraper(
                    name=config.name,
                    priority=config.priority,
                    signature_xpath=etree.XPath(signature) if is_xpath else None,
                    signature_regex=None if is_xpath else compile_linear(signature),
                    text_path=etree.XPath(config.text_path) if config.text_path.strip() else None,
                    delete_paths=tuple(etree.XPath(p.strip()) for p in config.delete_paths
                                       if p.strip()),
                    fields=tuple(
                        (name, value[2:] if value.startswith(":=") else etree.XPath(value))
                        for name, value in config.extract_fields
                    ),
                )
            )
        # Highest priority first; stable, so ties keep the configured order.
        self._scrapers = tuple(sorted(compiled, key=lambda s: -s.priority))

    def __bool__(self) -> bool:
        return bool(self._scrapers)

    def choose(self, doc: etree._Element, html: str) -> CompiledScraper | None:
        """The highest-priority scraper whose signature matches the page."""
        for scraper in self._scrapers:
            if scraper.matches(doc, html):
                return scraper
        return None

    @staticmethod
    def apply(
        scraper: CompiledScraper, doc: etree._Element
    ) -> tuple[etree._Element | None, Mapping[str, str]]:
        """Extract the fields, then return ``(text root or None, fields)`` with the delete
        paths removed from the text root (the document is modified)."""
        fields: dict[str, str] = {}
        for name, source in scraper.fields:
            if isinstance(source, str):
                fields[name] = source
                continue
            try:
                fields[name] = _text_of(source(doc))
            except etree.XPathError:
                fields[name] = ""
        root: etree._Element | None = None
        if scraper.text_path is not None:
            try:
                found = scraper.text_path(doc)
            except etree.XPathError:
                found = []
            if isinstance(found, list):
                root = next((n for n in found if isinstance(n, etree._Element)), None)
        target = root if root is not None else doc
        for path in scraper.delete_paths:
            try:
                victims = path(target)
            except etree.XPathError:
                continue
            if not isinstance(victims, list):
                continue
            for victim in victims:
                if isinstance(victim, etree._Element) and victim is not target:
                    parent = victim.getparent()
                    if parent is not None:
                        _remove_keep_tail(victim, parent)
        return root, fields


def _remove_keep_tail(element: etree._Element, parent: etree._Element) -> None:
    tail = element.tail
    previous = element.getprevious()
    parent.remove(element)
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
