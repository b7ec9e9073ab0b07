"""A durable inbox folder: what a queue server receives is on disk before it is acknowledged.

Layer: ``crawler.core``. The queue server's Celery worker (queue ``qs.<n>``) ``put``s each
message it receives and only then returns, so Celery's late acknowledgement happens after the
bytes are fsynced; the queue server process ``take``s them oldest first and ``done``s each one
after applying it. A message is applied at least once: the consumer must be idempotent (the
scheduler's Bloom filter and the indexer's seen-document check make it so).

Layout: ``<dir>/<kind>/<time ns, 20 digits>-<pid>-<seq>.msg``, each file ``SPOOL1`` + 4-byte
big-endian CRC32 + payload, written to a ``.tmp`` name, fsynced, renamed, and the directory
fsynced. A write that fails (a full disk) removes its own ``.tmp`` file; leftover ``.tmp`` files
are from writers killed mid-write and are removed by the consumer once a minute old; a file
whose checksum does not match is moved to ``<dir>/damaged/`` and reported, never applied.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from indexer.core.files.storage import fsync_dir

logger = logging.getLogger(__name__)
MAGIC = b"SPOOL1"
_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class SpoolItem:
    kind: str
    path: Path
    payload: bytes



class Spool:
    """One inbox directory; any number of writers, one consumer."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def _kind_dir(self, kind: str) -> Path:
        if not kind or not kind.replace("_", "").isalnum():
            raise ValueError(f"bad spool kind {kind!r}")
        path = self.directory / kind
        path.mkdir(exist_ok=True)
        return path

    def put(self, kind: str, payload: bytes) -> Path:
        """Store ``payload`` durably; when this returns the message survives a crash.

        Raises ``OSError`` (a full disk: ``ENOSPC``) when it could not, and then leaves
        nothing behind: no temporary file, no message; the caller keeps the payload (the
        inbox worker leaves it in the broker and tries again later)."""
        folder = self._kind_dir(kind)
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):08d}.msg"
        final = folder / name
        tmp = folder / (name + ".tmp")
        try:
            with open(tmp, "wb") as handle:
                # three writes, not one concatenation: a batch is not copied once more in memory
                handle.write(MAGIC)
                handle.write(zlib.crc32(payload).to_bytes(4, "big"))
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, final)
            fsync_dir(folder)
        except BaseException:
            tmp.unlink(missing_ok=True)
            # not known to be durable: the caller will store it again, so this copy goes
            final.unlink(missing_ok=True)
            raise
        return final

    def pending(self, kind: str) -> int:
        return sum(1 for p in self._kind_dir(kind).glob("*.msg"))

    def take(self, kind: str, limit: int | None = None) -> Iterator[SpoolItem]:
        """Messages of ``kind``, oldest first (they stay until :meth:`done`)."""
        folder = self._kind_dir(kind)
        self._clean(folder)
        for name in self.names(kind)[:limit]:
            item = self.read(kind, name)
            if item is not None:
                yield item

    def names(self, kind: str) -> list[str]:
        """The names of the messages of ``kind``, oldest first."""
        return sorted(p.name for p in self._kind_dir(kind).glob("*.msg"))

    def read(self, kind: str, name: str) -> SpoolItem | None:
        """Message ``name`` of ``kind``; None when it is gone or damaged (then quarantined)."""
        path = self._kind_dir(kind) / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        if (len(data) < 10 or data[:6] != MAGIC
                or int.from_bytes(data[6:10], "big") != zlib.crc32(memoryview(data)[10:])):
            self._quarantine(path)
            return None
        return SpoolItem(kind, path, data[10:])

    def move(self, item: SpoolItem, kind: str, name: str) -> None:
        """File a message taken under ``kind`` and ``name`` instead (a rename: it is never in
        neither place, and its bytes are not written again)."""
        folder = self._kind_dir(kind)
        os.replace(item.path, folder / name)
        fsync_dir(folder)

    def done(self, item: SpoolItem) -> None:
        try:
            item.path.unlink()
        except FileNotFoundError:
            pass

    def _clean(self, folder: Path) -> None:
        for tmp in folder.glob("*.tmp"):
            try:
                if time.time() - tmp.stat().st_mtime > 60:
                    tmp.unlink()
            except FileNotFoundError:
                pass

    def _quarantine(self, path: Path) -> None:
        damaged = self.directory / "damaged"
        damaged.mkdir(exist_ok=True)
        logger.error("spool message %s is damaged (bad header or checksum); moved to %s",
                     path, damaged)
        os.replace(path, damaged / f"{path.parent.name}-{path.name}")
