"""Robots directives in archived pages are still honoured: NOINDEX in a meta tag or in an
X-Robots-Tag header keeps a page out of the index, NOFOLLOW drops its links (no link
documents), as in a web crawl."""

from __future__ import annotations

from warcio.warcwriter import WARCWriter

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import DOC_TYPE, DocType
from indexer.core.text import TextAnalyzer
from tests.integration.archive.helpers import (
    bundle,
    crawl_config,
    html,
    response,
    run,
    warc_source,
)

TS = 1_700_000_500


def page(word: str, head: str = "", link: str = "") -> bytes:
    anchor = f'<a href="http://metas.test/target.html">{link}</a>' if link else ""
    return html(f"Page {word}", f"This page carries {word}. {anchor}", head)


def test_noindex_and_nofollow_are_honoured(tmp_path):
    warc = tmp_path / "metas.warc.gz"
    with open(warc, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for url, body, headers in [
            ("/noindex.html", page("zqmetanoindex", '<meta name="robots" content="noindex">'),
             None),
            ("/header.html", page("zqheadernoindex"),
             [("Content-Type", "text/html"), ("X-Robots-Tag", "noindex")]),
            ("/none.html", page("zqmetanone", '<meta name="robots" content="none">',
                                "zqanchornone"), None),
            ("/nofollow.html", page("zqmetanofollow", '<meta name="robots" content="nofollow">',
                                    "zqanchornofollow"), None),
            ("/plain.html", page("zqplainpage", link="zqanchorplain"), None),
            ("/target.html", page("zqplaintarget"), None),
        ]:
            writer.write_record(response(writer, "http://metas.test" + url, body,
                                         headers=headers))
    result = run(tmp_path, crawl_config(TS, warc_source(warc)))
    assert result.finished and result.pages_fetched == 6
    reader = IndexBundleReader(bundle(tmp_path, TS))
    analyzer = TextAnalyzer()

    def docs(word: str) -> int:
        (term,) = analyzer.query_terms(word, "en")
        return reader.term_stats(term).docs

    assert docs("zqmetanoindex") == 0
    assert docs("zqheadernoindex") == 0
    assert docs("zqmetanone") == 0 and docs("zqanchornone") == 0
    assert docs("zqmetanofollow") == 1 and docs("zqplaintarget") == 1
    # link documents (anchor text filed under the target) only from the followable page
    sources = set()
    for part in reader.partitions:
        for row in part.doc_map.member_ids[part.doc_map.member_ids[:, DOC_TYPE] == DocType.LINK]:
            sources.add(reader.summary(bytes(row))["source"])
    assert sources == {"http://metas.test/plain.html"}
    assert docs("zqanchorplain") == 2  # the page and its link document
