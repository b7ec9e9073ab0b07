"""Page rules: the admin's little language for editing a page's fields after processing.

Layer: ``crawler.core``. The admin validates rule text with :func:`parse_rules` (errors carry
line and column); the page processor compiles the crawl's rules once and runs them on every page
(:meth:`PageRules.apply`). Rules follow Yioop's page-rule language.

Grammar (one statement per line; blank lines and lines starting with ``#`` are ignored)::

    statement   := command | assignment
    command     := NAME "(" [argument] ")"
    argument    := FIELD | STRING | bare word (a path, CSV, SQL...)
    assignment  := FIELD ("=" | ".=") value
    value       := FIELD                      the other field's value
                 | STRING                     "text", with \\" and \\\\ escapes
                 | "/" regex "/" replacement "/" [flags]
                                              the left field's value with every match replaced;
                                              $1..$9 (or ${name}) insert groups
                 | "/" regex "/g" [flags]     the list of all matches in the left field
    FIELD       := [A-Za-z_][A-Za-z0-9_]*
    flags       := any of i m s x (regex flags)

``=`` sets the field, ``.=`` appends (strings concatenate; lists extend). Commands:

* ``addMetaWords(F)``: each value of F becomes the meta word ``f:value`` (lower case, spaces
  as ``_``);
* ``addKeywordLink(F)``: F holds ``keyword,url`` (or a list of them): added to ``KEYWORD_LINKS``;
* ``setStack(F)`` makes list field F the stack; ``pushStack(F)`` pushes F's value on it;
  ``popStack(F)`` pops the top into F;
* ``setOutputFolder(dir)``, ``setOutputFormat(CSV|SQL)``, ``setOutputTable(name)``, then
  ``writeOutput(F)``: a row (F's value; a list is one row of columns) for that folder, format
  and table, returned with the result; :func:`write_rule_outputs` appends rows to
  ``<dir>/<table>.csv`` or ``<dir>/<table>.sql``;
* ``toArray(F)``: split F on commas into a list; ``toString(F)``: join a list with ``", "``;
* ``unset(F)``: remove F.

Fields a page starts with: ``TITLE``, ``DESCRIPTION``, ``LANG``, ``URL``, ``HOST``,
``KEYWORDS`` and any scraper fields. After the rules run, ``TITLE``, ``DESCRIPTION`` and
``LANG`` are read back into the page.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import re2

from crawler.core.processing.errors import PageRuleSyntaxError
from crawler.core.processing.linear_regex import LinearRegexError, compile_linear

log = logging.getLogger(__name__)

COMMANDS = (
    "addMetaWords", "addKeywordLink", "setStack", "pushStack", "popStack", "setOutputFolder",
    "setOutputFormat", "setOutputTable", "toArray", "toString", "unset", "writeOutput",
)
_COMMANDS = {name.lower(): name for name in COMMANDS}
_FIELD_COMMANDS = frozenset({
    "addMetaWords", "addKeywordLink", "setStack", "pushStack", "popStack", "toArray",
    "toString", "unset", "writeOutput",
})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GROUP_REF = re.compile(r"\$(\d)|\$\{(\w+)\}")
_FLAG_BITS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
MAX_FIELD_CHARS = 1_000_000  # values longer than this are cut (rules cannot blow up memory)


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    argument: str
    is_field: bool
    line: int


@dataclass(frozen=True, slots=True)
class Assignment:
    """``field op value``; ``kind`` is ``field``, ``string``, ``replace`` or ``all``."""

    field: str
    append: bool
    kind: str
    value: str
    pattern: Any | None  # RE2
    line: int


Statement = Command | Assignment


@dataclass(frozen=True, slots=True)
class RuleOutput:
    """A row written by ``writeOutput``: where, in what format, and the values."""

    folder: str
    format: str
    table: str
    row: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RuleResult:
    """What running the rules on a page gave: the final fields, added meta words, keyword
    links and output rows."""

    fields: Mapping[str, Any]
    meta_words: tuple[str, ...]
    keyword_links: tuple[tuple[str, str], ...]
    outputs: tuple[RuleOutput, ...]


class _Cursor:
    def __init__(self, text: str, line: int) -> None:
        self.text = text
        self.pos = 0
        self.line = line

    def error(self, message: str, pos: int | None = None) -> PageRuleSyntaxError:
        column = (self.pos if pos is None else pos) + 1
        return PageRuleSyntaxError(message, self.line, column, self.text)

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def at_end(self) -> bool:
        self.skip_spaces()
        return self.pos >= len(self.text)

    def peek(self, literal: str) -> bool:
        self.skip_spaces()
        return self.text.startswith(literal, self.pos)

    def expect(self, literal: str, what: str) -> None:
        if not self.peek(literal):
            raise self.error(f"expected {what}")
        self.pos += len(literal)

    def identifier(self, what: str = "a field name") -> str:
        self.skip_spaces()
        match = _IDENT.match(self.text, self.pos)
        if match is None:
            raise self.error(f"expected {what}")
        self.pos = match.end()
        return match.group()

    def string(self) -> str:
        start = self.pos
        self.pos += 1  # opening quote
        out = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < len(self.text):
                out.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            if char == '"':
                self.pos += 1
                return "".join(out)
            out.append(char)
            self.pos += 1
        raise self.error("unterminated string", start)

    def delimited(self) -> tuple[str, int]:
        """Text up to the next unescaped ``/`` (which is consumed); ``\\/`` means ``/``."""
        start = self.pos
        out = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < len(self.text):
                following = self.text[self.pos + 1]
                out.append("/" if following == "/" else char + following)
                self.pos += 2
                continue
            if char == "/":
                self.pos += 1
                return "".join(out), start
            out.append(char)
            self.pos += 1
        raise self.error("unterminated regular expression: expected '/'", start)


def _compile(cursor: _Cursor, regex: str, start: int, flags: str) -> Any:
    """RE2 (linear time on any field value); a pattern it refuses is a syntax error. Python's
    parser is asked first only to point at the column of a plain syntax error."""
    bits = 0
    for flag in flags:
        bits |= _FLAG_BITS[flag]
    try:
        re.compile(regex, bits)
    except re.error as exc:
        column = start + (exc.pos or 0)
        raise cursor.error(f"invalid regular expression: {exc.msg}", column) from None
    try:
        return compile_linear(regex, flags)
    except LinearRegexError as exc:
        raise cursor.error(
            f"invalid regular expression /{regex}/: {exc.message}", start
        ) from None


def _replacement(template: str) -> str:
    """``$1``/``${name}`` -> Python's ``\\g<1>``/``\\g<name>``; other backslashes kept literal."""
    escaped = template.replace("\\", "\\\\")
    return _GROUP_REF.sub(lambda m: f"\\g<{m.group(1) or m.group(2)}>", escaped)


def _parse_line(text: str, number: int) -> Statement | None:
    cursor = _Cursor(text, number)
    if cursor.at_end() or cursor.peek("#"):
        return None
    name = cursor.identifier("a command or a field name")
    if cursor.peek("("):
        command = _COMMANDS.get(name.lower())
        if command is None:
            raise cursor.error(f"unknown command {name!r}", cursor.pos - len(name))
        cursor.expect("(", "'('")
        cursor.skip_spaces()
        argument = ""
        is_field = False
        if cursor.peek('"'):
            argument = cursor.string()
        else:
            start = cursor.pos
            while cursor.pos < len(cursor.text) and cursor.text[cursor.pos] not in ")":
                cursor.pos += 1
            argument = cursor.text[start : cursor.pos].strip()
            is_field = bool(_IDENT.fullmatch(argument))
            if command in _FIELD_COMMANDS and not is_field:
                raise cursor.error(f"{command} needs a field name", start)
        cursor.expect(")", "')'")
        if command == "setOutputFormat" and argument.upper() not in ("CSV", "SQL"):
            raise cursor.error("setOutputFormat takes CSV or SQL")
        if not cursor.at_end():
            raise cursor.error("unexpected text after command")
        return Command(command, argument, is_field, number)
    append = False
    if cursor.peek(".="):
        append = True
        cursor.pos += 2
    elif cursor.peek("="):
        cursor.pos += 1
    else:
        raise cursor.error("expected '(', '=' or '.='")
    cursor.skip_spaces()
    if cursor.at_end():
        raise cursor.error("expected a value: a field, a \"string\" or a /regex/")
    if cursor.peek('"'):
        value = cursor.string()
        result = Assignment(name, append, "string", value, None, number)
    elif cursor.peek("/"):
        cursor.pos += 1
        regex, start = cursor.delimited()
        if not regex:
            raise cursor.error("empty regular expression", start)
        tail = cursor.text[cursor.pos :].rstrip()
        if tail and tail[0] == "g" and set(tail[1:]) <= set(_FLAG_BITS):
            pattern = _compile(cursor, regex, start, tail[1:])
            cursor.pos = len(cursor.text)
            result = Assignment(name, append, "all", "", pattern, number)
        else:
            replacement, _ = cursor.delimited()
            flags_start = cursor.pos
            flags = cursor.text[cursor.pos :].strip()
            if not set(flags) <= set(_FLAG_BITS):
                raise cursor.error("unknown regular expression flag", flags_start)
            pattern = _compile(cursor, regex, start, flags)
            cursor.pos = len(cursor.text)
            result = Assignment(name, append, "replace", _replacement(replacement), pattern,
                                number)
    else:
        source = cursor.identifier("a field, a \"string\" or a /regex/")
        result = Assignment(name, append, "field", source, None, number)
    if not cursor.at_end():
        raise cursor.error("unexpected text after value")
    return result


def parse_rules(text: str) -> PageRules:
    """Compile rule text; :class:`PageRuleSyntaxError` (a ``ValueError``) at the first error,
    with 1-based ``line`` and ``column``."""
    statements = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        statement = _parse_line(line, number)
        if statement is not None:
            statements.append(statement)
    return PageRules(tuple(statements))


def _as_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_as_text(v) for v in value)
    return "" if value is None else str(value)


def _meta_value(value: str) -> str:
    return "_".join(value.lower().split())


@dataclass(frozen=True, slots=True)
class PageRules:
    """A compiled rule program (immutable; safe to share between threads)."""

    statements: tuple[Statement, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.statements)

    def apply(self, fields: Mapping[str, Any]) -> RuleResult:
        """Run the rules on a copy of ``fields``. Never raises on field contents."""
        values: dict[str, Any] = dict(fields)
        meta: list[str] = []
        keyword_links: list[tuple[str, str]] = []
        outputs: list[RuleOutput] = []
        stack_field: str | None = None
        folder, fmt, table = "", "CSV", "output"
        for statement in self.statements:
            if isinstance(statement, Assignment):
                self._assign(values, statement)
                continue
            name, arg = statement.name, statement.argument
            if name == "addMetaWords":
                raw = values.get(arg)
                items = raw if isinstance(raw, list) else [raw] if raw not in (None, "") else []
                for item in items:
                    word = _meta_value(_as_text(item))
                    if word:
                        meta.append(f"{arg.lower()}:{word}")
            elif name == "addKeywordLink":
                raw = values.get(arg)
                for item in raw if isinstance(raw, list) else [raw]:
                    text = _as_text(item)
                    if "," in text:
                        keyword, url = text.rsplit(",", 1)
                        if keyword.strip() and url.strip():
                            keyword_links.append((keyword.strip(), url.strip()))
                values["KEYWORD_LINKS"] = [f"{k},{u}" for k, u in keyword_links]
            elif name == "setStack":
                stack_field = arg
                if not isinstance(values.get(arg), list):
                    values[arg] = [] if values.get(arg) in (None, "") else [values[arg]]
            elif name == "pushStack":
                if stack_field is not None:
                    values[stack_field].append(values.get(arg, ""))
            elif name == "popStack":
                if stack_field is not None and values[stack_field]:
                    values[arg] = values[stack_field].pop()
            elif name == "setOutputFolder":
                folder = arg
            elif name == "setOutputFormat":
                fmt = arg.upper()
            elif name == "setOutputTable":
                table = arg
            elif name == "writeOutput":
                raw = values.get(arg, "")
                row = tuple(_as_text(v) for v in raw) if isinstance(raw, list) else (_as_text(raw),)
                outputs.append(RuleOutput(folder, fmt, table, row))
            elif name == "toArray":
                raw = values.get(arg)
                if not isinstance(raw, list):
                    values[arg] = [p.strip() for p in _as_text(raw).split(",") if p.strip()]
            elif name == "toString":
                values[arg] = _as_text(values.get(arg))
            elif name == "unset":
                values.pop(arg, None)
        return RuleResult(values, tuple(dict.fromkeys(meta)), tuple(keyword_links), tuple(outputs))

    @staticmethod
    def _assign(values: dict[str, Any], rule: Assignment) -> None:
        current = values.get(rule.field, "")
        if rule.kind == "string":
            new: Any = rule.value
        elif rule.kind == "field":
            new = values.get(rule.value, "")
            new = list(new) if isinstance(new, list) else new
        elif rule.kind == "all":
            assert rule.pattern is not None
            new = [m.group() for m in rule.pattern.finditer(_as_text(current)[:MAX_FIELD_CHARS])]
        else:
            assert rule.pattern is not None
            try:
                new = rule.pattern.sub(rule.value, _as_text(current)[:MAX_FIELD_CHARS])
            except (re2.error, IndexError) as exc:  # a group the regex does not have
                log.warning("page rule on line %d: %s", rule.line, exc)
                return
        if rule.append and rule.field in values:
            if isinstance(current, list):
                new = current + (new if isinstance(new, list) else [new])
            else:
                new = _as_text(current) + _as_text(new)
        if isinstance(new, str):
            new = new[:MAX_FIELD_CHARS]
        values[rule.field] = new


def _sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def write_rule_outputs(outputs: Sequence[RuleOutput], default_folder: str = ".") -> None:
    """Append ``writeOutput`` rows to ``<folder>/<table>.csv`` (CSV) or ``.sql`` (INSERTs)."""
    for output in outputs:
        folder = output.folder or default_folder
        table = re.sub(r"[^\w.-]", "_", output.table) or "output"
        os.makedirs(folder, exist_ok=True)
        if output.format == "SQL":
            path = os.path.join(folder, f"{table}.sql")
            line = f"INSERT INTO {table} VALUES ({', '.join(map(_sql_literal, output.row))});\n"
        else:
            path = os.path.join(folder, f"{table}.csv")
            buffer = io.StringIO()
            csv.writer(buffer).writerow(output.row)
            line = buffer.getvalue()
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line)
