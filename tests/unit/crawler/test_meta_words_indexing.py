from __future__ import annotations

from crawler.core.processing.indexing import batch_documents, to_index_documents
from crawler.core.processing.meta_words import page_meta_words, url_hash_word
from crawler.core.processing.safe import is_safe, unsafe_score
from indexer.core.ids import DocType
from indexer.core.meta_vocabulary import INTERNAL_PREFIXES, META_PREFIXES

from .helpers import html


def test_page_meta_words():
    words = page_meta_words(
        url="https://docs.python.org/3/library/os.html", host="docs.python.org", status=200,
        mime_type="text/html", lang="en-US", media="text", safe=True,
        fetched_at=1_700_000_000.0, last_modified="Wed, 21 Oct 2015 07:28:00 GMT",
        links=["https://a.org/"], size=12345, ip="127.0.0.11", server="nginx/1.22",
    )
    for word in ("site:all", "site:docs.python.org", "site:python.org", "path:/",
                 "path:/3/library", "path:/3/library/os.html", "filetype:html", "lang:en",
                 "lang:en-us", "media:text", "code:200", "date:2023-11-14", "modified:2015-10",
                 "info:https://docs.python.org/3/library/os.html", "link:https://a.org/",
                 "numlinks:1", "size:10000", "ip:127.0.0.11", "server:nginx", "safe:true"):
        assert word in words, word
    assert f"info:{url_hash_word('https://docs.python.org/3/library/os.html')}" in words
    assert "host:all" not in words
    assert len(set(words)) == len(words)


def test_every_meta_word_written_is_one_the_query_parser_reads():
    """The producer and the parser share one vocabulary (indexer.core.meta_vocabulary): a
    prefix written here but unknown to the parser could never be searched."""
    page = html('<title>Home</title><p>Body words.</p><a href="https://other.org/t">Target '
                'topic</a><a href="/in.html">Inner page</a>')
    written = {word.split(":", 1)[0] for document in to_index_documents(page)
               for word in document.meta_words}
    written |= {word.split(":", 1)[0] for word in page_meta_words(
        url="https://a.org/x.pdf", host="a.org", status=404, mime_type="application/pdf",
        lang="fr", media="text", safe=False, fetched_at=1_700_000_000.0,
        last_modified="Wed, 21 Oct 2015 07:28:00 GMT", links=["https://b.org/"], size=99,
        ip="127.0.0.1", server="x", location="https://a.org/y")}
    assert {"site", "lang", "safe", "info", "link", "source"} <= written
    assert written <= META_PREFIXES | INTERNAL_PREFIXES, written - META_PREFIXES


def test_safe_classifier():
    assert is_safe("https://a.org/", "A page about gardening and vegetables.")
    assert not is_safe("https://a.org/", "porn xxx porn nude xxx porn")
    assert not is_safe("https://xxx-site.example/", "harmless")
    assert unsafe_score("") == 0.0


def test_to_index_documents_page_then_link_documents():
    page = html('<title>Home</title><p>Body words.</p><a href="https://other.org/t">Target '
                'topic</a><a href="/in.html">Inner page</a><a href="/x.html">here</a>')
    documents = to_index_documents(page)
    assert [d.doc_type for d in documents] == [DocType.PAGE, DocType.LINK, DocType.LINK,
                                               DocType.LINK]
    first = documents[0]
    assert first.url == page.url and first.terms == page.terms and first.length == page.length
    assert first.text_hash == page.content_hash[:7] and len(first.doc_id) == 24
    assert first.summary["title"] == "Home"
    link = documents[1]
    assert (link.url, link.host) == ("https://other.org/t", "other.org")
    assert link.summary["description"] == "target topic" and link.summary["relation"] == "eref"
    assert dict(link.terms) == {"target": (0,), "topic": (1,)}
    assert "safe:true" in link.meta_words and "lang:en" in link.meta_words
    assert documents[2].summary["relation"] == "iref"
    # "here" alone is useless text: the URL's words stand in.
    assert documents[3].summary["description"] == "example"
    assert len(batch_documents([page, page])) == 8


def test_noarchive_keeps_no_cache_and_cache_is_the_truncated_body():
    assert html("<p>x</p>").cached_page == b"<p>x</p>"
    page = html('<meta name="robots" content="noarchive"><p>x</p>')
    assert to_index_documents(page)[0].cached_page is None
