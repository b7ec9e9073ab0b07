"""The query parser, as a table of queries and the structures they parse to."""

import pytest

from ranking.core.query import Controls, QueryParser

parser = QueryParser()
AUTO = ("safe:true", "lang:en")


def shape(query, **kwargs):
    parsed = parser.parse(query, **kwargs)
    return [
        {k: v for k, v in {
            "terms": d.terms, "meta": d.meta,
            "phrases": tuple(p.terms for p in d.phrases),
            "not": d.negated_terms, "not_phrases": tuple(p.terms for p in d.negated_phrases),
            "auto": d.auto_meta}.items() if v}
        for d in parsed.disjuncts
    ]


TABLE = [
    ("jumping dogs", [{"terms": ("jump", "dog"), "auto": AUTO}]),
    ("Jumping  DOGS  ", [{"terms": ("jump", "dog"), "auto": AUTO}]),
    ("python | django", [{"terms": ("python",), "auto": AUTO},
                         {"terms": ("django",), "auto": AUTO}]),
    ("django -flask", [{"terms": ("django",), "not": ("flask",), "auto": AUTO}]),
    ('"hello world"', [{"phrases": (("hello", "world"),), "auto": AUTO}]),
    ('"the * of python"', [{"phrases": (("the", None, "of", "python"),), "auto": AUTO}]),
    ('"* alone *"', [{"terms": ("alon",), "auto": AUTO}]),
    ('tea -"green tea"', [{"terms": ("tea",), "not_phrases": (("green", "tea"),),
                           "auto": AUTO}]),
    ('"a | b" c', [{"terms": ("c",), "phrases": (("a", "b"),), "auto": AUTO}]),
    ("site:Docs.Python.org tutorial", [{"terms": ("tutori",),
                                        "meta": ("site:docs.python.org",)}]),
    ("filetype:pdf manual", [{"terms": ("manual",), "meta": ("filetype:pdf",), "auto": AUTO}]),
    ("jump -site:a.com", [{"terms": ("jump",), "not": ("site:a.com",), "auto": AUTO}]),
    ("lang:fr chats", [{"terms": ("chat",), "meta": ("lang:fr",), "auto": ("safe:true",)}]),
    ("safe:false bikini", [{"terms": ("bikini",), "meta": ("safe:false",),
                            "auto": ("lang:en",)}]),
    ("media:image cats", [{"terms": ("cat",), "meta": ("media:image",),
                           "auto": ("safe:true",)}]),
    ("docs.python.org tutorial", [{"terms": ("tutori",), "meta": ("site:docs.python.org",)}]),
    ("www.example.com", [{"meta": ("site:www.example.com",)}]),
    ("D", [{"terms": ("letter", "d"), "auto": AUTO}, {"terms": ("d",), "auto": AUTO}]),
    ("U.S.A. history", [{"terms": ("_usa", "histori"), "auto": AUTO}]),
    ("info:https://a.com/x", [{"meta": ("info:https://a.com/x",)}]),
    ("link:https://a.com/", [{"meta": ("link:https://a.com/",), "auto": AUTO}]),
    ("code:404 date:2026-11 path:/docs", [{"meta": ("code:404", "date:2026-11", "path:/docs")}]),
    ("北京大学", [{"terms": ("北京", "京大", "大学"), "auto": ("safe:true", "lang:en")}]),
    # stop words narrow nothing: dropped when other words remain, kept when alone or quoted
    ("preparing a query", [{"terms": ("prepar", "queri"), "auto": AUTO}]),
    ("table of", [{"terms": ("tabl",), "auto": AUTO}]),
    ("the who", [{"terms": ("the", "who"), "auto": AUTO}]),
    ('"table of" contents', [{"terms": ("content",), "phrases": (("tabl", "of"),),
                              "auto": AUTO}]),
    ('of "python"', [{"terms": ("python",), "auto": AUTO}]),
]


@pytest.mark.parametrize(("query", "expected"), TABLE, ids=[q for q, _ in TABLE])
def test_parse_table(query, expected):
    assert shape(query) == expected


def test_no_guess_keeps_domains_as_words():
    parsed = parser.parse("no:guess docs.python.org")
    assert parsed.controls.guess is False
    assert parsed.disjuncts[0].meta == ()
    assert parsed.disjuncts[0].terms  # the url-like word is one canonical term
    assert not parsed.guessed
    assert parser.parse("docs.python.org").guessed


@pytest.mark.parametrize(
    ("query", "controls"),
    [("i:1700000000 apple", Controls(index=1700000000)),
     ("index:42 apple", Controls(index=42)),
     ("raw:1 apple", Controls(raw=True)),
     ("no:network no:cache apple", Controls(network=False, cache=False)),
     ("w:2.5 apple", Controls(weight=2.5))],
)
def test_control_words(query, controls):
    parsed = parser.parse(query)
    assert parsed.controls == controls
    assert parsed.disjuncts[0].terms == ("appl",)


@pytest.mark.parametrize(
    ("query", "message"),
    [("", "empty query"), ("   ", "empty query"), ("no:idea word", "unknown control word no:idea"),
     ('"unclosed phrase', "unbalanced quote"), ("i:abc word", "not a crawl timestamp"),
     ("w:-1 word", "not a positive weight"), ("m:mix word", "crawl mixes are not supported"),
     ("-", "empty query"), ("|||", "empty query")],
)
def test_bad_syntax_is_a_message_not_an_error(query, message):
    parsed = parser.parse(query)
    assert any(message in m for m in parsed.messages), parsed.messages


def test_unbalanced_quote_still_searches():
    parsed = parser.parse('python "standard library')
    assert parsed.disjuncts[0].terms == ("python",)
    assert parsed.disjuncts[0].phrases[0].terms == ("standard", "librari")


def test_safe_search_off_and_ui_language():
    parsed = parser.parse("cats", safe_search=False, ui_lang="de")
    assert parsed.disjuncts[0].auto_meta == ("safe:all", "lang:de")
    assert parsed.lang == "de"


def test_long_query_language_is_guessed_from_text():
    parsed = parser.parse("le chat est sur la table avec les enfants de la maison")
    assert parsed.lang == "fr"
    assert "lang:fr" in parsed.disjuncts[0].auto_meta


def test_highlight_words_and_word_count():
    parsed = parser.parse('Running "fast cars" -slow site:a.com')
    assert parsed.highlight == ("running", "fast", "cars")
    assert parsed.word_count == 3
    assert parsed.disjuncts[0].required[:3] == ("run", "fast", "car")


def test_hostile_input_does_not_raise():
    for query in ['"' * 51, "\x00\x01", "a" * 5000, ":::", "site:", "-" * 10, "|-\"*\"|",
                  "\u202e\u0301"]:
        parser.parse(query)
