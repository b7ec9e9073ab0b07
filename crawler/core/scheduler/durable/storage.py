"""Small durable-file helpers for the crawl queue: atomic replace, fsync of files and folders,
and checksummed blobs.

Layer: ``crawler.core.scheduler`` (pure Python). A *blob* is ``MAGIC(8) | version u32 |
length u64 | crc32 u32 | payload``; :func:`read_blob` checks all four before returning the
payload, so a torn or flipped file is reported (:class:`CorruptQueueError`), never used.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

from crawler.core.scheduler.errors import CorruptQueueError
from indexer.core.files.storage import fsync_dir

_BLOB_HEADER = struct.Struct("<8sIQI")
TMP_SUFFIX = ".tmp"


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, *parts: bytes | memoryview, sync: bool = True) -> None:
    """Write ``parts`` one after another to ``path`` through a temporary name, fsync, rename,
    fsync the folder; a failed write (a full disk) leaves nothing behind."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    try:
        with open(tmp, "wb") as handle:
            for part in parts:
                handle.write(part)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync:
        fsync_dir(path.parent)


def write_blob(path: Path, magic: bytes, version: int, payload: bytes | memoryview, *,
               sync: bool = True) -> None:
    """Atomically write a checksummed blob (see the module docstring)."""
    if len(magic) != 8:
        raise ValueError("blob magic must be 8 bytes")
    header = _BLOB_HEADER.pack(magic, version, len(payload), zlib.crc32(payload))
    atomic_write(path, header, payload, sync=sync)


def read_blob(path: Path, magic: bytes, max_version: int) -> tuple[int, bytes]:
    """Read and verify a blob; returns ``(version, payload)``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CorruptQueueError("checkpoint file is missing", str(path)) from None
    if len(data) < _BLOB_HEADER.size:
        raise CorruptQueueError("truncated header", str(path))
    found, version, length, crc = _BLOB_HEADER.unpack_from(data)
    if found != magic:
        raise CorruptQueueError(f"bad magic {found!r}", str(path))
    if version > max_version:
        raise CorruptQueueError(f"format version {version} is newer than {max_version}",
                                str(path))
    payload = data[_BLOB_HEADER.size:]
    if len(payload) != length:
        raise CorruptQueueError("truncated payload", str(path))
    if zlib.crc32(payload) != crc:
        raise CorruptQueueError("checksum mismatch", str(path))
    return version, payload
