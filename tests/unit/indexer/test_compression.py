"""indexer.core.compression: compressors sized to their input (small documents' summaries and
index blobs), readable by every zlib and gzip reader, as small as zlib.compress's output."""

from __future__ import annotations

import gzip
import random
import zlib

import pytest

from indexer.core.compression import deflate, gzip_member
from indexer.core.document import IndexDocument
from indexer.core.encoding import encode_document
from indexer.core.ids import DocType


def text_of(size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    words = [f"{rng.choice('bcdfgkl')}{rng.choice('aeiou')}{k}" for k in range(300)]
    out = " ".join(rng.choice(words) for _ in range(size // 4 + 1)).encode()
    return out[:size]


SIZES = [0, 1, 20, 250, 262, 263, 600, 5_000, 40_000, 300_000]


@pytest.mark.parametrize("size", SIZES)
def test_round_trips_through_every_reader(size: int) -> None:
    data = text_of(size, size)
    for level in (1, 4, 6, 9):
        assert zlib.decompress(deflate(data, level)) == data
        member = gzip_member(data, level)
        assert member[:2] == b"\x1f\x8b"
        assert zlib.decompress(member, 31) == data == gzip.decompress(member)
        assert zlib.decompress(member, 47) == data


@pytest.mark.parametrize("size", SIZES[1:])
def test_as_small_as_zlib_compress(size: int) -> None:
    data = text_of(size, size + 1)
    for level in (1, 4, 6):
        assert len(deflate(data, level)) <= len(zlib.compress(data, level)) * 1.01 + 2


def test_small_inputs_get_a_small_window_and_large_ones_the_full_window() -> None:
    window = lambda stream: 1 << ((stream[0] >> 4) + 8)  # noqa: E731  (zlib header's CINFO)
    assert window(deflate(b"a short anchor text")) == 512
    assert window(deflate(text_of(1_000, 1))) == 2048
    assert window(deflate(text_of(100_000, 2))) == 32768


def test_a_link_documents_blob_and_summary_are_compressed_for_their_size() -> None:
    url = "https://example.org/target.html"
    doc = IndexDocument(url=url, host="example.org", doc_type=DocType.LINK,
                        text_hash=b"\0" * 7, summary={"title": "target",
                                                       "source": "https://a.org/"},
                        terms={"target": [0], "page": [1]}, length=2)
    encoded = encode_document(doc)
    assert (encoded.index_blob[0] >> 4) + 8 == 9  # a 512-byte window, not zlib's 32 KiB
    assert zlib.decompress(encoded.summary, 31).startswith(b"{")
