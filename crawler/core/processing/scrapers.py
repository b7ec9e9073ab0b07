"""Scrapers: admin-defined extractors for kinds of pages (WordPress, MediaWiki...).

Layer: ``crawler.core``. The admin validates scraper fields with :func:`validate_scraper`
(and the per-field helpers); the HTML processor compiles the crawl's scrapers once into a
:class:`ScraperSet` and, per page, applies the best match.

A scraper has:

* ``signature``: an XPath if it starts with ``/`` (it matches a page when it selects at least
  one node, or evaluates to true), else a regular expression searched in the page's HTML;
* ``candidates`` (optional, built-in scrapers): a CSS selector that an element of every page
  the signature matches satisfies, a cheap pre-test of an XPath signature on the HTML
  processor's lexbor tree (:meth:`ScraperSet.may_match`): a page without such an element is
  not parsed by lxml for the signature. Without it, an XPath signature means every page is;
* ``priority``: among the scrapers whose signature matches, the highest wins (ties: the first);
* ``text_path``: an XPath whose first matching element becomes the text the summarizer reads;
* ``delete_paths``: XPaths (one per line / item) of elements removed from that text;
* ``extract_fields``: ``(FIELD, xpath)`` pairs (the text of the matches, joined with spaces)
  or ``(FIELD, ":=literal")`` pairs, added to the page's fields (page rules can use them);
* ``meta_words``: ``(prefix, xpath)`` or ``(prefix, ":=literal")`` pairs: each match (each
  element's text, each attribute's value) or the literal becomes the meta word ``prefix:value``
  (lower case, spaces as ``_``); the prefix must be one a query can name
  (:data:`indexer.core.meta_vocabulary.META_PREFIXES`). Two prefixes are read, not copied:
  ``duration`` takes seconds or an ISO 8601 duration (``PT4M13S``) and gives the page's
  duration words (:func:`crawler.core.processing.meta_words.duration_words`), and ``media`` sets the
  page's media type (``media:video``) in place of ``text``.

A page a scraper matched also gets the meta word ``scraper:<name>`` (:func:`scraper_word`:
the name in lower case, other characters than letters and digits as ``-``), so
``scraper:wordpress`` finds the pages the WordPress scraper read. The built-in scrapers
(:mod:`.builtin_scrapers`) are scrapers like the admin's, defined in code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from crawler.core.processing.errors import ScraperConfigError
from crawler.core.processing.linear_regex import LinearRegexError, compile_linear
from crawler.core.processing.meta_words import duration_words, parse_duration
from indexer.core.meta_vocabulary import META_PREFIXES

_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NOT_WORD = re.compile(r"[^a-z0-9]+")
MAX_META_VALUE = 100  # characters of a meta word's value
MAX_META_WORDS = 50   # meta words one scraper adds to a page


def scraper_word(name: str) -> str:
    """The ``scraper:`` meta word of a scraper's name ("" when the name has no letter or
    digit): ``Open Graph video`` -> ``scraper:open-graph-video``."""
    slug = _NOT_WORD.sub("-", name.lower()).strip("-")
    return f"scraper:{slug}" if slug else ""


@dataclass(frozen=True, slots=True)
class ScraperConfig:
    """One scraper as configured by the admin (see module docstring)."""

    name: str
    signature: str
    priority: int = 0
    text_path: str = ""
    delete_paths: tuple[str, ...] = ()
    extract_fields: tuple[tuple[str, str], ...] = ()
    meta_words: tuple[tuple[str, str], ...] = ()
    candidates: str = ""

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
            meta_words=tuple((str(k), str(v)) for k, v in getattr(spec, "meta_words", ())),
        )


def compile_xpath(text: str, field: str = "xpath", line: int = 0) -> etree.XPath:
    """A compiled XPath, or :class:`ScraperConfigError` naming the field and line (also for
    text lxml cannot take at all: NUL bytes and control characters)."""
    try:
        return etree.XPath(text.strip())
    except (etree.XPathSyntaxError, ValueError) as exc:
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


def _parse_pairs(text: str, field: str, check_name: Callable[[str], str]
                 ) -> tuple[tuple[str, str], ...]:
    """``NAME=xpath`` or ``NAME:=literal`` per line; ``check_name(name)`` returns an error
    message or "" (field: the scraper field named in errors)."""
    pairs = []
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
            compile_xpath(value, field, number)
        else:
            raise ScraperConfigError("expected NAME=xpath or NAME:=literal", field, number)
        problem = check_name(name)
        if problem:
            raise ScraperConfigError(problem, field, number)
        pairs.append((name, value))
    return tuple(pairs)


def _field_name_problem(name: str) -> str:
    return "" if _FIELD_NAME.match(name) else f"{name!r} is not a field name"


def _meta_prefix_problem(name: str) -> str:
    if name in META_PREFIXES:
        return ""
    return (f"{name!r} is not a meta-word prefix a query can name (one of "
            f"{', '.join(sorted(META_PREFIXES))})")


def parse_extract_fields(text: str) -> tuple[tuple[str, str], ...]:
    """``FIELD=xpath`` or ``FIELD:=literal`` per line -> ``((FIELD, xpath or ':=literal'), ...)``."""
    return _parse_pairs(text, "extract_fields", _field_name_problem)


def parse_meta_words(text: str) -> tuple[tuple[str, str], ...]:
    """``prefix=xpath`` or ``prefix:=literal`` per line -> ``((prefix, xpath or ':=literal'),
    ...)``; the prefix must be in ``META_PREFIXES``."""
    return _parse_pairs(text, "meta_words", _meta_prefix_problem)


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
    for number, (prefix, value) in enumerate(config.meta_words, start=1):
        problem = _meta_prefix_problem(prefix)
        if problem:
            raise ScraperConfigError(problem, "meta_words", number)
        if not value.startswith(":="):
            compile_xpath(value, "meta_words", number)


@dataclass(frozen=True, slots=True)
class CompiledScraper:
    name: str
    priority: int
    signature_xpath: etree.XPath | None
    signature_regex: Any | None  # RE2, linear in the page's length
    text_path: etree.XPath | None
    delete_paths: tuple[etree.XPath, ...]
    fields: tuple[tuple[str, etree.XPath | str], ...]
    meta: tuple[tuple[str, etree.XPath | str], ...] = ()
    candidates: str = ""

    def matches(self, doc: etree._Element, html: str) -> bool:
        if self.signature_regex is not None:
            return self.signature_regex.search(html) is not None
        assert self.signature_xpath is not None
        try:
            result = self.signature_xpath(doc)
        except etree.XPathError:
            return False
        return bool(result)


@dataclass(frozen=True, slots=True)
class Scraped:
    """What a scraper read from a page: the element whose text is the page's (None: the whole
    page), its fields, and its meta words (``scraper:<name>`` first)."""

    root: etree._Element | None
    fields: Mapping[str, str]
    meta_words: tuple[str, ...]

    @property
    def media(self) -> str | None:
        """The media type a ``media:`` meta word sets, or None."""
        return next((w[6:] for w in self.meta_words if w.startswith("media:")), None)


def _text_of(result: object) -> str:
    return " ".join(_values_of(result))


def _values_of(result: object) -> list[str]:
    """Each match of an XPath result as text: an element's text, a string's value."""
    items = result if isinstance(result, list) else [result]
    values = []
    for item in items:
        if isinstance(item, etree._Element):
            value = " ".join("".join(item.itertext()).split())
        elif isinstance(item, bool):
            value = "true" if item else ""
        else:
            value = " ".join(str(item).split())
        if value:
            values.append(value)
    return values


def _meta_words_of(prefix: str, values: Iterable[str]) -> list[str]:
    """The meta words of one ``meta_words`` line's values (see the module docstring)."""
    if prefix == "duration":
        words: list[str] = []
        for value in values:
            seconds = parse_duration(value)
            if seconds is not None:
                return duration_words(seconds)
        return words
    out = []
    for value in values:
        word = "_".join(value.lower().split())[:MAX_META_VALUE]
        if word:
            out.append(f"{prefix}:{word}")
    return out


def _compile(config: ScraperConfig) -> CompiledScraper:
    validate_scraper(config)
    signature = config.signature.strip()
    is_xpath = signature.startswith("/")

    def pairs(items: Iterable[tuple[str, str]]) -> tuple[tuple[str, etree.XPath | str], ...]:
        return tuple((name, value[2:] if value.startswith(":=") else etree.XPath(value))
                     for name, value in items)

    return CompiledScraper(
        name=config.name,
        priority=config.priority,
        signature_xpath=etree.XPath(signature) if is_xpath else None,
        signature_regex=None if is_xpath else compile_linear(signature),
        text_path=etree.XPath(config.text_path) if config.text_path.strip() else None,
        delete_paths=tuple(etree.XPath(p.strip()) for p in config.delete_paths if p.strip()),
        fields=pairs(config.extract_fields),
        meta=pairs(config.meta_words),
        candidates=config.candidates.strip() if is_xpath else "",
    )


def _reads_spans(config: ScraperConfig) -> bool:
    """Whether an XPath or the regular expression of the scraper names ``span``: the HTML
    processor then keeps the span tags of a page longer than ``processors.html.
    LARGE_PAGE_BYTES``, which it otherwise drops (a wildcard ``*`` then matches no span of
    such a page: the built-in scrapers name none, so they cost no large page its speed)."""
    paths = [config.signature, config.text_path, *config.delete_paths,
             *(v for _, v in config.extract_fields), *(v for _, v in config.meta_words)]
    return any("span" in p.lower() for p in paths if not p.startswith(":="))


class ScraperSet:
    """The crawl's scrapers, compiled once; immutable and safe to share between threads."""

    __slots__ = ("_always", "_candidates", "_regexes", "_scrapers", "reads_spans")

    def __init__(self, configs: Sequence[ScraperConfig] = ()) -> None:
        compiled = [_compile(config) for config in configs]
        # Highest priority first; stable, so ties keep the configured order.
        self._scrapers = tuple(sorted(compiled, key=lambda s: -s.priority))
        self.reads_spans = any(_reads_spans(config) for config in configs)
        # may_match's tests: the regular expressions, whether an XPath signature has no
        # candidates (then any page may match), the candidates of the others as one selector
        self._regexes = tuple(s.signature_regex for s in compiled if s.signature_regex is not None)
        xpaths = [s for s in compiled if s.signature_regex is None]
        self._always = any(not s.candidates for s in xpaths)
        self._candidates = ", ".join(s.candidates for s in xpaths)

    def __bool__(self) -> bool:
        return bool(self._scrapers)

    def choose(self, doc: etree._Element, html: str | Callable[[], str]
               ) -> CompiledScraper | None:
        """The highest-priority scraper whose signature matches the page. ``html`` is the
        page's text, or a function that makes it: called once, only if a regular-expression
        signature is tried (XPath signatures read the tree)."""
        text = html if isinstance(html, str) else None
        for scraper in self._scrapers:
            if scraper.signature_regex is not None and text is None:
                text = html()  # type: ignore[operator]
            if scraper.matches(doc, text or ""):
                return scraper
        return None

    def may_match(self, has_element: Callable[[str], bool], html: str | Callable[[], str]
                  ) -> bool:
        """Whether a scraper's signature may match the page, before any lxml tree: a
        regular expression is searched in ``html`` (the page's text, or a function that
        makes it: called at most once); an XPath signature with ``candidates`` may match
        when an element of the page matches them (``has_element(selector)``: all the
        scrapers' candidates are asked at once), one without always may. False only when
        none can match."""
        if self._regexes:
            text = html if isinstance(html, str) else html()
            if any(regex.search(text) is not None for regex in self._regexes):
                return True
        if self._always:
            return True
        return bool(self._candidates) and has_element(self._candidates)

    @staticmethod
    def apply(scraper: CompiledScraper, doc: etree._Element) -> Scraped:
        """Extract the fields and meta words, then choose the text root and remove the
        delete paths from it (the document is modified)."""
        fields: dict[str, str] = {}
        for name, source in scraper.fields:
            fields[name] = source if isinstance(source, str) else _text_of(_run(source, doc))
        meta = [scraper_word(scraper.name)]
        for prefix, source in scraper.meta:
            values = [source] if isinstance(source, str) else _values_of(_run(source, doc))
            meta += _meta_words_of(prefix, values)
        root: etree._Element | None = None
        if scraper.text_path is not None:
            found = _run(scraper.text_path, doc)
            if isinstance(found, list):
                root = next((n for n in found if isinstance(n, etree._Element)), None)
        target = root if root is not None else doc
        for path in scraper.delete_paths:
            victims = _run(path, target)
            if not isinstance(victims, list):
                continue
            for victim in victims:
                if isinstance(victim, etree._Element) and victim is not target:
                    parent = victim.getparent()
                    if parent is not None:
                        _remove_keep_tail(victim, parent)
        words = tuple(dict.fromkeys(w for w in meta if w))[:MAX_META_WORDS]
        return Scraped(root, fields, words)


def _run(path: etree.XPath, node: etree._Element) -> object:
    """An XPath's result on ``node``; an evaluation error gives no match."""
    try:
        return path(node)
    except etree.XPathError:
        return []


def _remove_keep_tail(element: etree._Element, parent: etree._Element) -> None:
    tail = element.tail
    previous = element.getprevious()
    parent.remove(element)
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
