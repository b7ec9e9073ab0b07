"""The query parser, as a table of queries and the structures they parse to."""

import pytest

from indexer.core.bundle.reader import IndexBundleReader
from ranking.core.query.parser import Controls, QueryParser
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from ..linkgraph.helpers import write_bundle

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
    # source: (the page a link document came from) is a url-valued meta word like link:;
    # it names one page, so the automatic lang:/safe: words stay off, as for info:
    ("source:https://a.com/docs/", [{"meta": ("source:https://a.com/docs/",)}]),
    ("flask source:https://a.com/x -source:https://b.org/",
     [{"terms": ("flask",), "meta": ("source:https://a.com/x",),
       "not": ("source:https://b.org/",)}]),
    # a url's path keeps its case (the index's urls are case-sensitive past the host)
    ("link:HTTPS://Docs.RS/std/struct.HashMap.html",
     [{"meta": ("link:https://docs.rs/std/struct.HashMap.html",), "auto": AUTO}]),
    ("source:https://A.com/Guide/Index.HTML",
     [{"meta": ("source:https://a.com/Guide/Index.HTML",)}]),
    ("info:AbC-_x09", [{"meta": ("info:AbC-_x09",)}]),
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
     ("w:-1 word", "not a positive weight"), ("m:mix word", "chooses a crawl mix only in the search box"),
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


def test_one_identifier_counts_as_one_word():
    """Issue 36: os.pathsep's terms stand side by side wherever it occurs, so proximity is
    left out (one word) and a page naming it once cannot pass the page that defines it."""
    for query in ("os.pathsep", "Persistent.merge", "os.path.join", "std::vector", "row-wise"):
        parsed = parser.parse(query)
        assert len(parsed.disjuncts[0].all_terms) >= 2 and parsed.word_count == 1, query
    for query in ("os.pathsep site:docs.python.org", "os path", "set intersection",
                  '"os.pathsep" join', "os.", ".pathsep"):
        assert parser.parse(query).word_count == len(parser.parse(query).disjuncts[0]
                                                     .all_terms), query
    assert parser.parse("os.path.join").word_count == 1


def test_hostile_input_does_not_raise():
    for query in ['"' * 51, "\x00\x01", "a" * 5000, ":::", "site:", "-" * 10, "|-\"*\"|",
                  "\u202e\u0301"]:
        parser.parse(query)


@pytest.mark.parametrize(
    ("query", "runs"),
    [("request context", (("request", "context"),)),
     ("the request context object", (("request", "context", "object"),)),
     # a stop word, a meta word, a quoted phrase or a negated word ends a run
     ("flask and django", ()),
     ("flask site:a.com request context", (("request", "context"),)),
     ('app factory "blue prints" error handler',
      (("app", "factori"), ("error", "handler"))),
     ("app factory -flask error handler", (("app", "factori"), ("error", "handler"))),
     ("thread-based parallelism", (("thread", "base", "parallel"),)),
     ("python", ()),
     ("python | request context", (("request", "context"),))],
)
def test_runs_of_adjacent_loose_words(query, runs):
    parsed = parser.parse(query)
    assert tuple(r for d in parsed.disjuncts for r in d.runs) == runs


def test_quoted_stop_word_is_kept():
    # a quoted word is not loose: it is searched (and ends a run) even when a stop word
    parsed = parser.parse('"the" running dogs')
    assert parsed.disjuncts[0].terms == ("the", "run", "dog")
    assert parsed.disjuncts[0].runs == (("run", "dog"),)


GUIDE = "https://docs.test/Guide/Index.html"


def _page(title: str, body: str, links: dict[str, str] = {}) -> str:  # noqa: B006
    anchors = "".join(f'<a href="{url}">{text}</a> ' for url, text in links.items())
    return f"<html><head><title>{title}</title></head><body><p>{body}</p>{anchors}</body></html>"


def test_source_meta_word_finds_the_pages_a_page_links_to(tmp_path):
    # documents made by the crawler's own page processor and indexing: the guide's link
    # documents carry source:<guide url> (its path has capitals, kept by the index)
    pages = [
        (GUIDE, _page("The guide", "Start here to learn the framework.",
                      {"https://docs.test/install.html": "Installation steps",
                       "https://docs.test/tutorial.html": "A first tutorial",
                       "https://docs.test/never-crawled.html": "Missing page"})),
        ("https://docs.test/install.html", _page("Installation", "Install the framework with "
                                                 "pip, then check the version.")),
        ("https://docs.test/tutorial.html", _page("Tutorial", "Write a first application.")),
        ("https://docs.test/other.html", _page("Other", "Unrelated page about releases.",
                                               {"https://docs.test/api.html": "API"})),
        ("https://docs.test/api.html", _page("API", "Every function of the framework.")),
    ]
    path = write_bundle(tmp_path / "b", pages)
    with IndexBundleReader(path) as reader:
        searcher = Searcher([LocalShard(reader)])
        found = searcher.search(f"source:{GUIDE}")
        assert sorted(r.url for r in found.results) == [
            "https://docs.test/install.html", "https://docs.test/tutorial.html"]
        # with a word: only the targets whose anchor text holds it (scheme and host as typed)
        found = searcher.search("installation source:HTTPS://Docs.Test/Guide/Index.html")
        assert [r.url for r in found.results] == ["https://docs.test/install.html"]
        # another page's links are not the guide's
        found = searcher.search("source:https://docs.test/other.html")
        assert [r.url for r in found.results] == ["https://docs.test/api.html"]
