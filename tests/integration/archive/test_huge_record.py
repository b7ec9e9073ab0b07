"""A WARC record that inflates to 1.6 GB (a 1.6 MB ``.warc.gz`` of spaces) is read in bounded
memory and the crawl goes on past it (issue 34, item 3).

The archive is written once, streamed through a gzip compressor: a good page, the huge
record, two more good pages, one gzip member each. Each crawl runs in a subprocess whose peak
resident memory (``VmHWM``) is measured, with its address space limited so that reading
the record whole (3.2 GB before the fix) fails there instead of straining the machine. With
the default cap the record is skipped as ``too_large`` and counted; with a cap above its size
it is read, only as far as its heads and byte range, and indexed like any page.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from crawler.core.archive import skipped
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.text import TextAnalyzer
from tests.integration.archive.helpers import builder, bundle, html, record_bytes, response

REPO = Path(__file__).resolve().parents[3]
SPACES = 1600 << 20            # bytes of spaces in the huge record's body
PEAK_LIMIT_KB = 200 * 1024     # the acceptance's bound on peak memory
WORDS = ("goodzero", "goodone", "goodtwo")
HUGE_WORD = "hugeword"

CRAWL_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    def peak_kb():
        # this program's peak resident memory: VmHWM, not ru_maxrss, which Linux carries over
        # exec from the process that started it (a pytest process already large)
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from crawler.core.archive.source import ArchiveKind, ArchiveSource
    from crawler.core.local_crawl import LocalCrawl
    from crawler.core.processing.process import PageProcessor
    from tests.integration.archive.helpers import FETCH, crawl_config
    warc, work, timestamp, cap = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    extra = {} if cap == "default" else {"max_record_bytes": int(cap)}
    source = ArchiveSource(ArchiveKind.WARC, warc, **extra)
    runner = LocalCrawl(crawl_config(timestamp, source), work, FETCH, PageProcessor(),
                        fetchers=1, schedule_size=5, refresh_seconds=0.0)
    try:
        result = runner.run(max_seconds=600)
    finally:
        runner.close()
    print(json.dumps({"finished": result.finished, "pages": result.pages_fetched,
                      "skipped": result.stats[0].get("archive_skipped", {}),
                      "peak_kb": peak_kb()}))
""")


def good(n: int) -> bytes:
    return record_bytes(response(builder(), f"http://huge.test/good{n}.html",
                                 html(f"Good {n}", f"The word {WORDS[n]} is on this page.")))


def huge_record() -> tuple[bytes, bytes]:
    """The huge record's bytes before and after its ``SPACES`` spaces."""
    body_start = html("Huge", HUGE_WORD).replace(b"</p></body></html>", b"")
    body_end = b"</p></body></html>"
    http = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Content-Length: %d\r\n\r\n" % (len(body_start) + SPACES + len(body_end)))
    block = len(http) + len(body_start) + SPACES + len(body_end)
    head = ("WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://huge.test/big.html\r\n"
            "WARC-Date: 2024-05-01T10:00:00Z\r\n"
            "WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000001>\r\n"
            "Content-Type: application/http; msgtype=response\r\n"
            f"Content-Length: {block}\r\n\r\n").encode()
    return head + http + body_start, body_end + b"\r\n\r\n"


def gzip_member(handle, chunks) -> None:
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    for chunk in chunks:
        handle.write(packer.compress(chunk))
    handle.write(packer.flush())


@pytest.fixture(scope="module")
def huge_warc(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("huge") / "huge.warc.gz"
    before, after = huge_record()
    spaces = b" " * (1 << 20)
    with open(path, "wb") as handle:
        gzip_member(handle, [good(0)])
        gzip_member(handle, [before, *(spaces for _ in range(SPACES >> 20)), after])
        gzip_member(handle, [good(1)])
        gzip_member(handle, [good(2)])
    assert path.stat().st_size < 4 << 20  # a small file, a 1.6 GB record
    return path


def crawl_in_subprocess(warc: Path, work: Path, timestamp: int, cap: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", CRAWL_SCRIPT, str(warc), str(work),
                           str(timestamp), cap], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def indexed(work: Path, timestamp: int, word: str) -> int:
    reader = IndexBundleReader(bundle(work, timestamp))
    (term,) = TextAnalyzer().query_terms(word, "en")
    return reader.term_stats(term).docs


def test_a_record_over_the_cap_is_skipped_and_the_crawl_goes_on(huge_warc, tmp_path):
    result = crawl_in_subprocess(huge_warc, tmp_path, 1_700_000_410, "default")
    assert result["finished"]
    assert result["peak_kb"] < PEAK_LIMIT_KB, result["peak_kb"]
    assert result["pages"] == 3
    too_large = result["skipped"][skipped.TOO_LARGE]
    assert too_large["count"] == 1 and too_large["url"] == "http://huge.test/big.html"
    assert set(result["skipped"]) == {skipped.TOO_LARGE}
    for word in WORDS:
        assert indexed(tmp_path, 1_700_000_410, word) == 1, word
    assert indexed(tmp_path, 1_700_000_410, HUGE_WORD) == 0


def test_a_huge_record_under_the_cap_is_read_only_as_far_as_the_byte_range(huge_warc,
                                                                           tmp_path):
    result = crawl_in_subprocess(huge_warc, tmp_path, 1_700_000_420, str(2 << 30))
    assert result["finished"]
    assert result["peak_kb"] < PEAK_LIMIT_KB, result["peak_kb"]
    assert result["pages"] == 4 and result["skipped"] == {}
    for word in (*WORDS, HUGE_WORD):
        assert indexed(tmp_path, 1_700_000_420, word) == 1, word
