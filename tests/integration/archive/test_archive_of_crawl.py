"""An archive crawl of an earlier crawl's stored pages, and of its WARC export: the current
Page Options apply (a page rule the first crawl did not have), nothing is downloaded, a page
stored without a cached copy is skipped and counted, and with one queue server the documents
are stored in the same order as the crawl stored them (the archive keeps Doc Rank's order)."""

from __future__ import annotations

from dataclasses import replace

from crawler.core.archive import skipped
from crawler.core.archive.export import export_crawl
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.layout import DOCUMENTS
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.documents.store import PartitionDocumentBundle
from indexer.core.ids import DOC_TYPE, DocType
from indexer.core.runtime.workdir import crawl_bundles
from indexer.core.text import TextAnalyzer
from tests.fixtures.sites import FixtureServer
from tests.integration.archive.helpers import (
    bundle,
    crawl_config,
    crawl_source,
    run,
    warc_source,
)
from tests.integration.archive.sites import NOARCHIVE_WORD, archive_site, seeds_of

WEB, FROM_CRAWL, FROM_WARC = 1_700_000_400, 1_700_000_401, 1_700_000_402
RULE_WORD = "zqreindexedword"


def stored(work, timestamp):
    """(doc type, doc id) of every document of the crawl's bundle, in stored order."""
    documents = PartitionDocumentBundle(bundle(work, timestamp) / DOCUMENTS)
    return [(r.doc_id[DOC_TYPE], r.doc_id) for n in range(len(documents.partitions))
            for r in documents.read_records(n)]


def docs_with(work, timestamp, word):
    (term,) = TextAnalyzer().query_terms(word, "en")
    return IndexBundleReader(bundle(work, timestamp)).term_stats(term).docs


def test_archive_crawls_of_a_crawl_and_of_its_warc(tmp_path):
    site, route = archive_site()
    rules = PageProcessor(replace(PageProcessingConfig(), page_rules=f'TITLE .= " {RULE_WORD}"'))
    with FixtureServer(route) as server:
        web = run(tmp_path, crawl_config(WEB, seeds=seeds_of(server)))
        requests = len(server.log)
        noarchive = seeds_of(server)[1]
        export_crawl(crawl_bundles(tmp_path, WEB), tmp_path / "x" / "web.warc.gz", {})
        from_crawl = run(tmp_path, crawl_config(FROM_CRAWL, crawl_source(tmp_path, WEB)),
                         processor=rules)
        from_warc = run(tmp_path, crawl_config(FROM_WARC, warc_source(
            tmp_path / "x" / "web.warc.gz")))
        assert len(server.log) == requests  # the site is up, and was asked nothing more
    assert requests > 0 and web.finished and from_crawl.finished and from_warc.finished
    skipped_counts = {k: v["count"] for k, v in from_crawl.stats[0]["archive_skipped"].items()}
    assert skipped_counts == {skipped.NO_CACHED_COPY: 1}  # the NOARCHIVE page
    assert from_warc.stats[0]["archive_skipped"] == {}  # it was left out of the export
    # every document the crawl stored (pages, redirects, link documents) in the same order,
    # but for the NOARCHIVE page and its links: its text was not kept
    original = stored(tmp_path, WEB)
    reader = IndexBundleReader(bundle(tmp_path, WEB))
    expected = [e for e in original if noarchive not in (
        reader.summary(e[1]).get("url"), reader.summary(e[1]).get("source"))]
    assert len(expected) < len(original)
    assert stored(tmp_path, FROM_WARC) == expected
    assert stored(tmp_path, FROM_CRAWL) == expected
    # ...and the page rule of the archive crawl's Page Options applied to every page
    pages = sum(1 for kind, _ in original if kind == DocType.PAGE)
    assert docs_with(tmp_path, FROM_CRAWL, RULE_WORD) == pages - 1
    assert docs_with(tmp_path, WEB, RULE_WORD) == 0
    for page in site.pages.values():
        if page.allowed:
            assert docs_with(tmp_path, FROM_CRAWL, page.word) >= 1, page.path
            assert docs_with(tmp_path, FROM_WARC, page.word) >= 1, page.path
    assert docs_with(tmp_path, WEB, NOARCHIVE_WORD) == 1
    assert docs_with(tmp_path, FROM_CRAWL, NOARCHIVE_WORD) == 0
