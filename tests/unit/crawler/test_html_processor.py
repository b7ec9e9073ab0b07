from __future__ import annotations

import pytest

from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.indexing import to_index_documents
from indexer.core.ids import DocType

from .helpers import fixture, html

PAGE = """<!DOCTYPE html><html><head><title>  Sample   Page </title>
<meta name="description" content="A page about testing page processing.">
<script>var hidden = "scriptword";</script><style>.x{color:red}</style></head>
<body><h1>Main heading</h1><p>First paragraph talks about crawling. It has two sentences.</p>
<p>Second paragraph about indexing.</p><a href="/other.html">Other page on indexing</a>
</body></html>"""


def test_title_from_title_tag_collapsed():
    assert html(PAGE).title == "Sample Page"


def test_title_falls_back_to_first_nonempty_heading_and_is_cut_to_100():
    page = html("<html><body><h2> </h2><h3>Heading three</h3><h1>Later</h1></body></html>")
    assert page.title == "Heading three"
    assert len(html(f"<title>{'x' * 300}</title>").title) == 100


def test_scripts_and_styles_are_stripped():
    page = html(PAGE)
    assert "scriptword" not in page.description and "color" not in page.description
    assert "scriptword" not in page.terms


def test_description_is_sentences_in_order_within_the_limit():
    page = html(PAGE)
    assert page.description.startswith("A page about testing page processing.")
    assert "Second paragraph about indexing." in page.description
    short = html(PAGE, config=PageProcessingConfig(max_description_len=40))
    assert 0 < len(short.description) <= 40


def test_region_weights_cover_title_then_sentences():
    page = html(PAGE)
    assert page.region_weights[0] == (1, 4.0)  # "sample page": positions 0 and 1
    lasts = [last for last, _ in page.region_weights]
    assert lasts == sorted(lasts) and lasts[-1] == page.length - 1
    assert all(weight > 0 for _, weight in page.region_weights)
    assert page.terms["sampl"] == (0,)
    positions = sorted(p for ps in page.terms.values() for p in ps)
    assert positions == list(range(page.length))


def test_links_from_a_frame_iframe_img_with_base_href():
    page = html("""<html><head><base href="https://base.org/dir/"></head><body>
      <a href="a.html">Anchor text here</a>
      <a href="nofollow.html" rel="nofollow">Not followed</a>
      <iframe src="frame.html" title="Embedded frame"></iframe>
      <img src="pic.png" alt="Picture of a cat">
      <a href="a.html">More anchor words</a>
      <a href="mailto:x@y.org">mail</a><a href="javascript:go()">js</a>
      <a href="b.html"><img src="i.png" alt="Image inside link"></a>
      </body></html>""")
    by_url = {link.url: link for link in page.links}
    assert set(by_url) == {"https://base.org/dir/a.html", "https://base.org/dir/frame.html",
                           "https://base.org/dir/pic.png", "https://base.org/dir/b.html",
                           "https://base.org/dir/i.png"}
    assert by_url["https://base.org/dir/a.html"].text == "anchor text .. anchor words"
    assert by_url["https://base.org/dir/pic.png"].text == "picture cat"
    assert by_url["https://base.org/dir/pic.png"].kind == "img"
    assert by_url["https://base.org/dir/b.html"].text == "image inside link"  # a term here


def test_links_to_the_page_itself_under_either_scheme_are_dropped():
    """A Sphinx "development docs: go here" banner links each page to itself on http://; the
    host redirects that back to the page, which a crawl then downloaded twice."""
    page = html("""<a href="http://example.com/page.html">go here</a>
      <a href="https://example.com/page.html#top">top</a>
      <a href="http://example.com/other.html">Other page</a>
      <a href="http://elsewhere.org/page.html">Elsewhere page</a>""")
    assert [link.url for link in page.links] == ["http://example.com/other.html",
                                                 "http://elsewhere.org/page.html"]
    on_http = html('<a href="https://example.com/page.html">secure copy</a>',
                   url="http://example.com/page.html")
    assert on_http.links == ()


def test_link_text_loses_click_here():
    page = html('<a href="/t.html">Click here for the tutorial</a>')
    assert page.links[0].text == "tutorial"


def test_frameset_frames_are_links():
    page = html('<html><frameset><frame src="left.html"><frame src="right.html"></frameset></html>')
    assert {link.kind for link in page.links} == {"frame"}
    assert len(page.links) == 2


def test_extraction_stops_at_300_and_pruning_keeps_the_most_informative_50():
    anchors = "".join(f'<a href="/p{i}.html">w{i}</a>' for i in range(400))
    rich = '<a href="/rich.html">many different useful words describing the target</a>'
    config = PageProcessingConfig(max_links=50, max_links_to_extract=300)
    page = html(f"<body>{rich}{anchors}</body>", config=config)
    assert len(page.links) == 50
    assert page.links[0].url.endswith("/rich.html")
    unlimited = html(f"<body>{rich}{anchors}</body>",
                     config=PageProcessingConfig(max_links=-1, max_links_to_extract=300))
    assert len(unlimited.links) == 300


def test_page_options_above_300_links_extract_and_keep_that_many():
    from crawler.core.definition.crawl import CrawlTimeOptions

    anchors = "".join(f'<a href="/p{i}.html">w{i}</a>' for i in range(2000))
    seed = PageProcessingConfig.from_options(CrawlTimeOptions(max_links_to_extract=50))
    assert (seed.max_links, seed.max_links_to_extract) == (50, 300)
    default = PageProcessingConfig.from_options(CrawlTimeOptions())  # every link
    assert (default.max_links, default.max_links_to_extract) == (100_000, 100_000)
    many = PageProcessingConfig.from_options(CrawlTimeOptions(max_links_to_extract=1500))
    assert (many.max_links, many.max_links_to_extract) == (1500, 1500)
    page = html(f"<body>{anchors}</body>", config=many)
    assert [link.url.rsplit("/", 1)[1] for link in page.links] == \
        [f"p{i}.html" for i in range(1500)]


@pytest.mark.parametrize("name", ["robots", "ROBOTS", "googlebot-robot", "Robot"])
def test_robot_metas_from_any_meta_containing_robot(name):
    page = html(f'<meta name="{name}" content="NoIndex, nofollow"><a href="/x.html">x link</a>')
    assert {"NOINDEX", "NOFOLLOW"} <= page.robot_metas
    assert page.links == ()
    assert not page.indexable
    documents = to_index_documents(page)
    assert all(doc.doc_type != DocType.PAGE for doc in documents)


def test_other_metas_and_headers():
    page = html('<meta name="googlebot" content="noindex"><p>text</p>')
    assert page.robot_metas == frozenset()
    page = html("<p>text</p>", X_Robots_Tag="noarchive, nosnippet")
    assert page.robot_metas == {"NOARCHIVE", "NOSNIPPET"}
    assert page.cached_page is None and not page.snippetable
    assert to_index_documents(page)[0].summary["description"] == ""


def test_none_directive_means_noindex_nofollow():
    page = html('<meta name="robots" content="none"><a href="/x.html">x link</a>')
    assert not page.indexable and not page.followable and page.links == ()


def test_meta_refresh_and_far_canonical_make_a_location():
    page = html('<meta http-equiv="refresh" content="0; url=/new.html"><p>old</p>')
    assert page.location == "https://example.com/new.html"
    assert page.doc_type == DocType.LOCATION
    assert page.description == "https://example.com/page.html => https://example.com/new.html"
    assert [link.kind for link in page.links] == ["location"]
    near = html('<link rel="canonical" href="https://example.com/page.htm"><p>x</p>')
    assert near.location is None
    far = html('<link rel="canonical" href="https://example.com/elsewhere/"><p>x</p>')
    assert far.location == "https://example.com/elsewhere/"


def test_dedup_hash_ignores_tags_scripts_and_punctuation():
    a = html("<p>Hello, world!</p><script>x=1</script>", url="https://a.org/1")
    b = html("<div><b>Hello</b> world</div>", url="https://b.org/2")
    c = html("<p>Hello there world</p>")
    assert a.content_hash == b.content_hash != c.content_hash
    assert len(a.text_hash) == 7


def test_encoding_from_meta():
    body = '<meta charset="iso-8859-1"><title>Café crème</title>'.encode("latin-1")
    assert html(body).title == "Café crème"


def test_language_from_html_lang_and_text():
    assert html('<html lang="de-AT"><p>x</p></html>').lang == "de-AT"
    german = ("<html lang='en'><p>Das ist ein Text, der auf Deutsch geschrieben ist und die "
              "Sprache soll erkannt werden, auch wenn die Seite etwas anderes sagt.</p></html>")
    assert html(german).lang == "de"


def test_scripts_only_or_empty_pages_do_not_fail():
    for body in ("", "<html></html>", "<script>x</script>", "\x00\x01<<<>>>", "<?xml?>"):
        page = html(body)
        assert page.url == "https://example.com/page.html"
        assert isinstance(page.description, str)


def test_byte_range_is_honoured():
    body = "<p>" + "word " * 10000 + "</p><p>finalword</p>"
    page = html(body, config=PageProcessingConfig(byte_range=1000))
    assert page.truncated
    assert "finalword" not in page.terms


def test_real_python_page():
    page = html(fixture("python-shlex.html"), url="https://docs.python.org/3/library/shlex.html")
    assert page.title.startswith("shlex")
    assert page.lang.startswith("en")
    assert 0 < len(page.links) <= 50
    assert all(link.url.startswith("https://") for link in page.links)
    assert "shlex" in page.terms
    assert "site:docs.python.org" in page.meta_words
    documents = to_index_documents(page)
    assert documents[0].doc_type == DocType.PAGE
    assert len(documents) > 1 and all(d.doc_type == DocType.LINK for d in documents[1:])


def test_real_postgresql_and_django_pages():
    page = html(fixture("postgresql-sql-delete.html"),
                url="https://www.postgresql.org/docs/15/sql-delete.html")
    assert "DELETE" in page.title
    assert page.description
    page = html(fixture("django-pagination.html"),
                url="https://docs.djangoproject.com/en/3.2/topics/pagination.html")
    assert "Pagination" in page.title
    assert "pagin" in page.terms


@pytest.mark.parametrize(("name", "lang"), [
    ("debian-reference-pr01.zh-tw.html", "zh-TW"),
    ("debian-reference-pr01.fr.html", "fr"),
    ("debian-reference-index.ja.html", "ja"),
])
def test_real_translated_pages_language_from_text(name, lang):
    # Served without a language marker in the URL: the text test must find the language.
    page = html(fixture(name), url="https://www.debian.org/doc/manuals/debian-reference/x.html")
    assert page.lang == lang
    assert page.lang_source == "text"
