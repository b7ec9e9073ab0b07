"""The crawl queue's write-ahead journal (``ScheduleData/journal.<generation>.log``).

Layer: ``crawler.core.scheduler``. Every call that changes the queue appends one record and, when
the queue is configured to, fdatasyncs before returning: this is what makes "accepted" mean "on
disk". A record is ``length u32 | crc32 u32 | payload`` with a pickled (protocol 5) tuple as the
payload. Reading stops at the first record that is short or fails its checksum: that is a write
torn by a crash, and the call that wrote it never returned.
"""

from __future__ import annotations

import os
import pickle
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_HEAD = struct.Struct("<II")


class JournalWriter:
    """Appends records to one journal file."""

    def __init__(self, path: Path, *, sync: bool = True) -> None:
        self.path = path
        self._sync = sync
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.size = os.fstat(self._fd).st_size

    def append(self, record: tuple[Any, ...]) -> None:
        payload = pickle.dumps(record, protocol=5)
        data = memoryview(_HEAD.pack(len(payload), zlib.crc32(payload)) + payload)
        while data:
            written = os.write(self._fd, data)
            data = data[written:]
        if self._sync:
            os.fdatasync(self._fd)
        self.size += _HEAD.size + len(payload)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_journal(path: Path) -> Iterator[tuple[Any, ...]]:
    """The complete records of a journal, in order (a torn tail is ignored)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    offset = 0
    while offset + _HEAD.size <= len(data):
        length, crc = _HEAD.unpack_from(data, offset)
        start = offset + _HEAD.size
        payload = data[start:start + length]
        if len(payload) < length or zlib.crc32(payload) != crc:
            return
        yield pickle.loads(payload)
        offset = start + length
