"""Bad records are counted by reason and skipped, never fatal: each kind is put between good
records of a .warc.gz and of a plain .warc, and the good ones around it are all indexed."""

from __future__ import annotations

import gzip

from crawler.core.archive import skipped
from crawler.core.archive.source import ArchiveKind, ArchiveSource
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.text import TextAnalyzer
from tests.integration.archive.helpers import (
    builder,
    bundle,
    crawl_config,
    html,
    record_bytes,
    response,
    run,
)


def good(n: int) -> bytes:
    return record_bytes(response(builder(), f"http://bad.test/good{n}.html",
                                 html(f"Good {n}", f"The word goodword{'abcdefghij'[n]} is here.")))


def wrong_length(url: str, delta: int) -> bytes:
    """A record whose Content-Length is ``delta`` bytes off."""
    data = record_bytes(response(builder(), url, html("Bad", "wrong length")))
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = [line if not line.lower().startswith(b"content-length:") else
             b"Content-Length: %d" % (int(line.split(b":")[1]) + delta)
             for line in head.split(b"\r\n")]
    return b"\r\n".join(lines) + b"\r\n\r\n" + rest


def raw_record(uri: str, block: bytes, kind: str = "response", extra: str = "") -> bytes:
    head = (f"WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\n"
            f"WARC-Date: 2024-05-01T10:00:00Z\r\nWARC-Record-ID: <urn:uuid:{abs(hash(uri))}>\r\n"
            f"{extra}Content-Type: application/http; msgtype=response\r\n"
            f"Content-Length: {len(block)}\r\n\r\n")
    return head.encode() + block + b"\r\n\r\n"


def write_archive(folder) -> None:
    orphan = raw_record("http://bad.test/again.html", b"HTTP/1.1 200 OK\r\n\r\n", "revisit",
                        "WARC-Refers-To: <urn:uuid:nowhere>\r\nWARC-Payload-Digest: sha1:XX\r\n"
                        "WARC-Profile: http://netpreserve.org/warc/1.0/revisit/"
                        "identical-payload-digest\r\n")
    members = [good(0), wrong_length("http://bad.test/long.html", +40), good(1),
               raw_record("dns:bad.test", b"20240501100000\nbad.test. 60 IN A 127.0.0.1\n"),
               raw_record("http://bad.test/nothttp.html", b"hello, not an HTTP message"),
               orphan, good(2)]
    last = gzip.compress(good(3))
    with open(folder / "a.warc.gz", "wb") as handle:
        for member in members:
            handle.write(gzip.compress(member))
        handle.write(last[:len(last) // 2])  # the file was cut in the middle of a member
    with open(folder / "b.warc", "wb") as handle:  # plain: records follow each other
        handle.write(good(4) + wrong_length("http://bad.test/short.html", -25) + good(5))


def test_each_bad_record_is_counted_and_skipped(tmp_path):
    folder = tmp_path / "warcs"
    folder.mkdir()
    write_archive(folder)
    result = run(tmp_path, crawl_config(1_700_000_200, ArchiveSource(ArchiveKind.WARC,
                                                                     str(folder))))
    assert result.finished
    counts = {kind: row["count"] for kind, row in result.stats[0]["archive_skipped"].items()}
    assert counts == {skipped.BAD_LENGTH: 2, skipped.NOT_HTTP: 2,
                      skipped.REVISIT_WITHOUT_ORIGINAL: 1, skipped.TRUNCATED_GZIP: 1}
    examples = result.stats[0]["archive_skipped"]
    assert examples[skipped.REVISIT_WITHOUT_ORIGINAL]["url"] == "http://bad.test/again.html"
    assert examples[skipped.BAD_LENGTH]["url"] in ("http://bad.test/long.html",
                                                   "http://bad.test/short.html")
    assert result.pages_fetched == 5  # good 0, 1, 2, 4, 5; good 3 was cut
    reader = IndexBundleReader(bundle(tmp_path, 1_700_000_200))
    analyzer = TextAnalyzer()
    for n, found in ((0, 1), (1, 1), (2, 1), (3, 0), (4, 1), (5, 1)):
        (term,) = analyzer.query_terms(f"goodword{'abcdefghij'[n]}", "en")
        assert reader.term_stats(term).docs == found, n
