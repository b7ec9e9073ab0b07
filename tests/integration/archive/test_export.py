"""WARC export round trip: a crawl of a fixture site exported; warcio reads every record back,
``warcio check`` and ``warcio index`` accept the file, the CDXJ offsets point at the response
records, the payloads are the pages as served, and a NOARCHIVE page is left out and counted."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from io import BytesIO
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from crawler.core.archive import skipped
from crawler.core.archive.cdxj import parse_line
from crawler.core.archive.export import export_crawl
from indexer.core.runtime.workdir import crawl_bundles
from tests.fixtures.sites import FixtureServer
from tests.integration.archive.helpers import crawl_config, run
from tests.integration.archive.sites import archive_site, seeds_of

WARCIO = Path(sys.executable).parent / "warcio"
TS = 1_700_000_300


def crawl_and_export(tmp_path):
    site, route = archive_site()
    with FixtureServer(route) as server:
        result = run(tmp_path, crawl_config(TS, seeds=seeds_of(server)))
        served = {server.url(path): served_body(server.url(path))
                  for path in ("/", "/page/1.html", "/page/3.html")}
    assert result.finished
    out = tmp_path / "export" / "crawl.warc.gz"
    report = export_crawl(crawl_bundles(tmp_path, TS), out, {"isPartOf": "test"})
    return site, report, served


def served_body(url: str) -> bytes:
    with urllib.request.urlopen(url) as answer:
        return answer.read()


def test_export_round_trip(tmp_path):
    site, report, served = crawl_and_export(tmp_path)
    # every allowed page of the site, the sitemaps, the redirect; the NOARCHIVE page left out
    assert report.left_out == {skipped.NO_CACHED_COPY: 1}
    assert report.redirects == 1
    with open(report.path, "rb") as handle:
        records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"),
                    r.rec_headers.get_header("WARC-Record-ID"),
                    r.rec_headers.get_header("WARC-Concurrent-To")
                    or r.rec_headers.get_header("WARC-Refers-To"),
                    r.http_headers.get_statuscode() if r.http_headers else None,
                    r.content_stream().read())
                   for r in ArchiveIterator(handle)]
    assert records[0][0] == "warcinfo"
    listed = [uri for kind, uri, *_ in records if kind == "response"]
    assert len(listed) == report.pages + report.redirects
    base = next(iter(served)).rstrip("/")
    # a page stored twice (reached by its url and through the redirect) is two captures
    assert set(listed) == {base + p for p in [*site.allowed_paths, *site.sitemap_paths,
                                               "/moved"]}
    responses = {uri: (rid, status, body) for kind, uri, rid, _, status, body in records
                 if kind == "response"}
    for url, body in served.items():
        assert responses[url][2] == body  # the payload is the page as it was served
    assert [s for _, s, _ in responses.values()].count("301") == 1
    assert not any("noarchive" in uri for uri in responses)
    ids = {rid for kind, _, rid, *_ in records if kind == "response"}
    for kind in ("request", "metadata"):  # one of each per response, pointing at it
        assert sorted(ref for k, _, _, ref, _, _ in records if k == kind) == sorted(ids)
    meta = next(body for k, _, _, _, _, body in records if k == "metadata")
    assert b"yioopy-fetched-at: " in meta and b"yioopy-title: " in meta


def test_warcio_accepts_the_file_and_the_cdxj_points_at_the_records(tmp_path):
    _, report, _ = crawl_and_export(tmp_path)
    check = subprocess.run([str(WARCIO), "check", "-v", str(report.path)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "digest pass" in check.stdout and "fail" not in check.stdout
    index = subprocess.run([str(WARCIO), "index", str(report.path)], capture_output=True,
                           text=True)
    assert index.returncode == 0, index.stderr
    listed = [json.loads(line) for line in index.stdout.splitlines()]
    assert len(listed) == 1 + 3 * (report.pages + report.redirects)
    lines = report.cdxj.read_text().splitlines()
    assert len(lines) == report.pages + report.redirects and lines == sorted(lines)
    data = report.path.read_bytes()
    for line in lines:
        key, timestamp, fields = parse_line(line)
        offset, length = int(fields["offset"]), int(fields["length"])
        assert fields["filename"] == report.path.name and len(timestamp) == 14
        (record,) = list(ArchiveIterator(BytesIO(data[offset:offset + length])))
        assert record.rec_type == "response"
        assert record.rec_headers.get_header("WARC-Target-URI") == fields["url"]
        assert record.rec_headers.get_header("WARC-Payload-Digest") == fields["digest"]
        path = "/" + fields["url"].split("/", 3)[3]
        assert key.startswith("127.0.0.1:") and key.endswith(")" + path.lower())
