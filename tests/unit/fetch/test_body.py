"""Byte-limited body reading and incremental decoding (no network)."""

from __future__ import annotations

import gzip
import io
import time
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.core.http.body import BodyDecodeError, read_body


def reader(data: bytes, chunk: int = 4096):
    stream = io.BytesIO(data)
    return lambda n: stream.read(min(n, chunk))


def test_identity_cut_and_complete() -> None:
    read = read_body(reader(b"a" * 1000), coding="", limit=400, raw_limit=10_000)
    assert read.body == b"a" * 400 and read.truncated and not read.complete
    read = read_body(reader(b"a" * 400), coding="", limit=400, raw_limit=10_000)
    assert read.body == b"a" * 400 and not read.truncated and read.complete


def test_gzip_bomb_is_cut_cheaply() -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    segment = comp.compress(bytes(1 << 20)) + comp.flush(zlib.Z_FULL_FLUSH)
    pieces = iter([segment] * 100_000)  # ~100 GB decoded if inflated

    def read(n: int) -> bytes:
        return next(pieces, b"")
    started = time.monotonic()
    result = read_body(read, coding="gzip", limit=1_000_000, raw_limit=3_000_000)
    assert time.monotonic() - started < 3.0  # inflating it all would take minutes
    assert result.body == bytes(1_000_000) and result.truncated


@pytest.mark.parametrize("coding,encode", [
    ("gzip", gzip.compress), ("x-gzip", gzip.compress), ("deflate", zlib.compress),
    ("deflate", lambda d: zlib.compress(d)[2:-4]),  # raw deflate, no zlib wrapper
])
def test_codings_round_trip(coding: str, encode) -> None:
    data = b"hello world " * 5000
    result = read_body(reader(encode(data), chunk=100), coding=coding, limit=10**6,
                       raw_limit=10**7)
    assert result.body == data and not result.truncated and result.complete


def test_multi_member_gzip() -> None:
    data = gzip.compress(b"one ") + gzip.compress(b"two")
    assert read_body(reader(data), coding="gzip", limit=100, raw_limit=1000).body == b"one two"


def test_corrupt_gzip_raises_decode_error() -> None:
    with pytest.raises(BodyDecodeError):
        read_body(reader(b"\x1f\x8b\x08\x00garbage-garbage-garbage"), coding="gzip", limit=100,
                  raw_limit=1000)


def test_unknown_coding_is_kept_raw() -> None:
    result = read_body(reader(b"\x00\x01br-bytes"), coding="br", limit=100, raw_limit=1000)
    assert result.body == b"\x00\x01br-bytes"


def test_raw_limit_stops_input_that_inflates_to_nothing() -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = comp.compress(b"") + comp.flush(zlib.Z_SYNC_FLUSH)
    empty_block = b"\x00\x00\x00\xff\xff"  # an empty non-final stored block: no output
    calls = iter([head] + [empty_block * 1000] * 10**6)
    result = read_body(lambda n: next(calls, b""), coding="gzip", limit=1000, raw_limit=50_000)
    assert result.truncated and result.body == b""


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=5000), st.integers(1, 6000), st.integers(1, 700),
       st.sampled_from(["", "gzip", "deflate"]))
def test_prefix_property(data: bytes, limit: int, chunk: int, coding: str) -> None:
    encoded = {"": lambda d: d, "gzip": gzip.compress, "deflate": zlib.compress}[coding](data)
    result = read_body(reader(encoded, chunk), coding=coding, limit=limit, raw_limit=10**6)
    assert result.body == data[:limit]
    if len(data) > limit:
        assert result.truncated
    elif len(data) < limit:
        assert not result.truncated and result.complete
