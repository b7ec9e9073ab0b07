"""Feeds read into items (``crawler.core.processing.processors.feed_items``), shared by the
feed processor and the news sources: RSS 2.0, RSS 1.0 (RDF), Atom, their dates, broken XML."""

from __future__ import annotations

from datetime import UTC, datetime

from crawler.core.news.documents import item_url
from crawler.core.processing.processors.feed_items import FeedItem, feed_date, parse_feed

NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC).timestamp()


def test_rss2_items_with_html_descriptions_and_rfc822_dates():
    feed = parse_feed(b"""<rss version="2.0"><channel><title>Harbour</title>
        <language>de</language><description>&lt;b&gt;Port&lt;/b&gt; news</description>
        <item><title>Ferry</title><link>https://h.test/f</link>
        <description><![CDATA[<p>Boats <em>sail</em></p>]]></description>
        <pubDate>Sun, 29 Nov 2026 13:00:00 +0100</pubDate></item>
        <item><title>Guid only</title><guid>https://h.test/g</guid></item>
        </channel></rss>""")
    assert feed.title == "Harbour" and feed.lang == "de" and feed.description == "Port news"
    assert feed.items == (FeedItem("Ferry", "https://h.test/f", "Boats sail", NOON),
                          FeedItem("Guid only", "https://h.test/g", "", None))


def test_atom_and_rdf_entries():
    atom = parse_feed(b"""<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="fr">
        <title>Coast</title><entry><title>Tide</title>
        <link rel="edit" href="https://c.test/edit"/><link href="https://c.test/tide"/>
        <summary>High tide</summary><updated>2026-11-29T12:00:00Z</updated></entry></feed>""")
    assert atom.lang == "fr"
    assert atom.items == (FeedItem("Tide", "https://c.test/tide", "High tide", NOON),)
    rdf = parse_feed(b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
        <channel><title>Old</title></channel><item><title>One</title>
        <link>http://o.test/1</link><dc:date>2026-11-29T13:00:00+01:00</dc:date></item>
        </rdf:RDF>""")
    assert rdf.items == (FeedItem("One", "http://o.test/1", "", NOON),)


def test_dates_that_cannot_be_read_are_none():
    assert feed_date("2026-11-29") == datetime(2026, 11, 29, tzinfo=UTC).timestamp()
    for value in ("", "tomorrow", "Sun, 99 Foo 2026", "9" * 40, "2026-13-45T99:00:00Z"):
        assert feed_date(value) is None, value


def test_broken_and_hostile_bodies():
    assert parse_feed(b"\x00\xff not xml") is None
    assert parse_feed(b"") is None
    entity = b"""<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>
        <rss><channel><title>&x;</title><item><title>a</title></item></channel></rss>"""
    feed = parse_feed(entity)
    assert feed is not None and "root:" not in feed.title
    many = b"<rss><channel>" + b"<item><title>t</title></item>" * 700 + b"</channel></rss>"
    assert len(parse_feed(many).items) == 500
    cut = parse_feed(b"<rss><channel><title>Cut</title><item><title>Whole</title></item><ite")
    assert cut.title == "Cut" and cut.items[0].title == "Whole"


def test_item_urls_are_web_urls_resolved_against_the_feed():
    def url(link: str) -> str | None:
        return item_url(FeedItem("t", link, ""), "https://h.test/feeds/main.rss")
    assert url("/news/1") == "https://h.test/news/1"
    assert url("2.html") == "https://h.test/feeds/2.html"
    assert url("javascript:alert(1)") is None and url("") is None
    assert url("ftp://h.test/x") is None
