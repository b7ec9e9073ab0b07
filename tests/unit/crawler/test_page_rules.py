from __future__ import annotations

import pytest

from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.errors import PageRuleSyntaxError
from crawler.core.processing.page_rules import RuleOutput, parse_rules, write_rule_outputs

from .helpers import html


@pytest.mark.parametrize(("text", "line", "column"), [
    ("TITLE = ", 1, 9),
    ("\n\nTITLE == x", 3, 8),
    ('TITLE = "unterminated', 1, 9),
    ("TITLE = /a(/b/", 1, 11),
    ("frobnicate(TITLE)", 1, 1),
    ("addMetaWords(not a field)", 1, 14),
    ("TITLE = /abc", 1, 10),
    ("TITLE = OTHER extra", 1, 15),
    ("setOutputFormat(XML)", 1, 21),
    ("1TITLE = x", 1, 1),
    ("TITLE = /a/b/q", 1, 14),
])
def test_syntax_errors_report_line_and_column(text, line, column):
    with pytest.raises(PageRuleSyntaxError) as info:
        parse_rules(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert isinstance(info.value, ValueError)


def test_assignments_strings_fields_and_regex():
    rules = parse_rules('''
        # comment
        A = "x \\"quoted\\" y"
        B = TITLE
        B .= " suffix"
        C = TITLE
        C = /(\\w+) (\\w+)/$2-$1/
        D = DESCRIPTION
        D = /\\d+/g
        E = "a/b"
        E = /\\//-/
    ''')
    result = rules.apply({"TITLE": "hello world", "DESCRIPTION": "1 and 22 and 333"})
    fields = result.fields
    assert fields["A"] == 'x "quoted" y'
    assert fields["B"] == "hello world suffix"
    assert fields["C"] == "world-hello"
    assert fields["D"] == ["1", "22", "333"]
    assert fields["E"] == "a-b"


def test_commands():
    rules = parse_rules("""
        addMetaWords(GENRE)
        LIST = "a, b ,c"
        toArray(LIST)
        setStack(STACK)
        pushStack(GENRE)
        popStack(POPPED)
        JOINED = LIST
        toString(JOINED)
        LINK = "Python docs,https://docs.python.org/"
        addKeywordLink(LINK)
        unset(GENRE)
        setOutputFolder(/tmp/out)
        setOutputFormat(sql)
        setOutputTable(pages)
        writeOutput(LIST)
    """)
    result = rules.apply({"GENRE": "Science Fiction"})
    assert result.meta_words == ("genre:science_fiction",)
    assert result.fields["LIST"] == ["a", "b", "c"]
    assert result.fields["POPPED"] == "Science Fiction"
    assert result.fields["JOINED"] == "a, b, c"
    assert result.keyword_links == (("Python docs", "https://docs.python.org/"),)
    assert "GENRE" not in result.fields
    assert result.outputs == (RuleOutput("/tmp/out", "SQL", "pages", ("a", "b", "c")),)


def test_write_rule_outputs(tmp_path):
    write_rule_outputs([RuleOutput(str(tmp_path), "CSV", "t", ("a", 'b"c')),
                        RuleOutput(str(tmp_path), "SQL", "t", ("it's",))])
    assert (tmp_path / "t.csv").read_bytes() == b'a,"b""c"\r\n'
    assert (tmp_path / "t.sql").read_text() == "INSERT INTO t VALUES ('it''s');\n"


def test_rules_change_the_processed_page():
    rules = 'TITLE = /Sample/Example/\nDESCRIPTION = "Rewritten text"\nSEC = "x"\naddMetaWords(SEC)'
    page = html("<title>Sample page</title><p>Original words.</p>",
                config=PageProcessingConfig(page_rules=rules))
    assert page.title == "Example page"
    assert page.description == "Rewritten text"
    assert "rewritten" in page.terms and "origin" not in page.terms
    assert "sec:x" in page.meta_words


def test_bad_rules_fail_when_the_processor_is_made():
    from crawler.core.processing.process import PageProcessor
    with pytest.raises(PageRuleSyntaxError):
        PageProcessor(PageProcessingConfig(page_rules="TITLE ="))
