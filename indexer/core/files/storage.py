"""Durable files: atomic replace, framing with version and checksum, append-only logs, locks.

Layer: ``indexer.core``. Every file of an index bundle goes through this module, so that a crash
(kill -9 at any instant) or a flipped bit is detected on open and never silently served.

Three kinds of file:

* **Framed binary files** (doc_map, positions, postings, last_entries). Written whole, to a
  temporary name, fsynced, renamed over the final name, and the directory fsynced. Layout::

      offset size
      0      4    magic b"YPYX"
      4      16   kind, ASCII, NUL padded (b"postings", b"doc_map", ...)
      20     2    format version (big-endian unsigned)
      22     2    flags (0; 1 for append-only logs)
      24     8    payload length
      32     4    crc32 of the payload
      36     4    crc32 of bytes 0..35
      40     ...  payload

* **Framed text files** (pdb_parameters.txt, archive_info.txt, next_partition.txt, MANIFEST):
  the first line is ``#yioopy <kind> v<version> len=<payload bytes> crc32=<8 hex>``, the
  payload follows. Written atomically like the binary ones.

* **Append-only logs** (partition_N.ix, partition_N.txt.gz, the dictionary node file): the same
  40-byte header with flag ``LOG`` and zero length/crc, then records that each carry their own
  checksum. The committed length of a log lives in a framed manifest that is replaced atomically
  *after* the log data is fsynced: bytes past the committed length are the debris of a crash and
  are truncated by the next writer; bytes before it are checked by their record checksums.

Files a numpy writer streams (the per-url score file, the web graph's arrays, the phrase
lexicon) go through :func:`atomic_stream` instead: temporary file, fsync, rename.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import struct
import tempfile
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..errors import CorruptIndexError, IndexFormatTooNew, IndexLockedError

logger = logging.getLogger(__name__)

MAGIC = b"YPYX"
FORMAT_VERSION = 1
HEADER = struct.Struct(">4s16sHHQII")
HEADER_SIZE = HEADER.size  # 40
_HEAD_CRC_AT = HEADER_SIZE - 4
FLAG_LOG = 1
TMP_MARK = ".tmp."

PathLike = str | os.PathLike[str]


def _kind_bytes(kind: str) -> bytes:
    raw = kind.encode("ascii")
    if len(raw) > 16:
        raise ValueError(f"file kind too long: {kind!r}")
    return raw.ljust(16, b"\0")


def fsync_dir(path: PathLike) -> None:
    """fsync a directory so that a rename or a new file inside it is durable."""
    fd = os.open(os.fspath(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: PathLike, data: bytes | memoryview) -> None:
    """Write ``data`` to ``path`` through a temporary file: write, fsync, rename, fsync dir."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}{TMP_MARK}{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        # a write that failed (a full disk, say) leaves no temporary file taking space
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def atomic_stream(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` through a temporary file beside it: ``write(handle)``, fsync, rename (the
    caller fsyncs the folder once for several files). For writers that stream into a file
    object (``np.save``, ``np.savez``) rather than hand over bytes (:func:`atomic_write`)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fsync_all(fds: list[int], data_only: bool = False) -> None:
    """fsync (or fdatasync) every descriptor, concurrently: the waits for the disk overlap
    (``os.fsync`` releases the GIL), so several files cost about one flush. Raises the first
    error after every call has finished."""
    sync = os.fdatasync if data_only else os.fsync
    if len(fds) <= 1:
        for fd in fds:
            sync(fd)
        return
    errors: list[BaseException] = []

    def run(fd: int) -> None:
        try:
            sync(fd)
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(fd,)) for fd in fds[1:]]
    for thread in threads:
        thread.start()
    run(fds[0])
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def atomic_write_many(directory: PathLike, files: dict[str, bytes | memoryview]) -> None:
    """:func:`atomic_write` for several files of one directory: write every temporary file,
    fsync them all at once, rename each over its final name, then fsync the directory once.
    When this returns every file is durable; a crash before leaves each name with either its
    old or its new content."""
    directory = Path(directory)
    fds: list[int] = []
    tmps: list[tuple[Path, Path]] = []
    try:
        try:
            for name, data in files.items():
                path = directory / name
                tmp = path.with_name(f"{path.name}{TMP_MARK}{os.getpid()}")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                fds.append(fd)
                tmps.append((tmp, path))
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            fsync_all(fds)
        finally:
            for fd in fds:
                os.close(fd)
    except BaseException:
        # nothing was renamed yet: every name keeps its old content, and no temporary file
        # is left taking space (a full disk, say)
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, path in tmps:
        os.replace(tmp, path)
    fsync_dir(directory)


def link_many(directory: PathLike, names: dict[str, str]) -> None:
    """Give existing, durable files of ``directory`` new names as well (``names``: existing
    name -> new name), each new name replacing what it held atomically (a hard link made under
    a temporary name, then renamed), then fsync the directory once: the bytes are not written
    again. A crash before this returns leaves each new name with its old content or the
    file's."""
    directory = Path(directory)
    for existing, new in names.items():
        tmp = directory / f"{new}{TMP_MARK}{os.getpid()}"
        tmp.unlink(missing_ok=True)
        os.link(directory / existing, tmp)
        os.replace(tmp, directory / new)
    fsync_dir(directory)


def remove_temporaries(directory: PathLike) -> None:
    """Delete temporary files a crashed writer left behind (names containing ``.tmp.``)."""
    for entry in os.scandir(directory):
        if TMP_MARK in entry.name and entry.is_file():
            os.unlink(entry.path)


def frame(kind: str, payload: bytes, version: int = FORMAT_VERSION, flags: int = 0) -> bytes:
    """The 40-byte header followed by ``payload``."""
    head = HEADER.pack(MAGIC, _kind_bytes(kind), version, flags, len(payload),
                       zlib.crc32(payload), 0)[:_HEAD_CRC_AT]
    return head + struct.pack(">I", zlib.crc32(head)) + payload


def _check_header(path: PathLike, data: bytes, kind: str, flags: int) -> tuple[int, int, int]:
    if len(data) < HEADER_SIZE:
        raise CorruptIndexError(path, f"truncated header ({len(data)} bytes)")
    magic, raw_kind, version, got_flags, length, crc, head_crc = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CorruptIndexError(path, "bad magic: not an index file")
    if zlib.crc32(data[:_HEAD_CRC_AT]) != head_crc:
        raise CorruptIndexError(path, "header checksum mismatch")
    if raw_kind != _kind_bytes(kind):
        found = raw_kind.rstrip(b"\0").decode("ascii", "replace")
        raise CorruptIndexError(path, f"wrong file kind {found!r}, expected {kind!r}")
    if version > FORMAT_VERSION:
        raise IndexFormatTooNew(path, version, FORMAT_VERSION)
    if got_flags != flags:
        raise CorruptIndexError(path, f"unexpected flags {got_flags}")
    return version, length, crc


def unframe(path: PathLike, data: bytes, kind: str) -> bytes:
    """Check the header and checksum of a framed file's bytes; return the payload."""
    _, length, crc = _check_header(path, data, kind, 0)
    payload = data[HEADER_SIZE:]
    if len(payload) != length:
        raise CorruptIndexError(path, f"payload is {len(payload)} bytes, header says {length}")
    if zlib.crc32(payload) != crc:
        raise CorruptIndexError(path, "payload checksum mismatch")
    return payload


def read_framed(path: PathLike, kind: str) -> bytes:
    """Read and verify a framed binary file; raise :class:`CorruptIndexError` naming it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CorruptIndexError(path, f"unreadable: {exc}") from exc
    return unframe(path, data, kind)


# -- text files -------------------------------------------------------------------------------

def frame_text(kind: str, text: str, version: int = FORMAT_VERSION) -> bytes:
    payload = text.encode("utf-8")
    head = f"#yioopy {kind} v{version} len={len(payload)} crc32={zlib.crc32(payload):08x}\n"
    return head.encode("ascii") + payload


def unframe_text(path: PathLike, data: bytes, kind: str) -> str:
    newline = data.find(b"\n")
    if newline < 0:
        raise CorruptIndexError(path, "missing header line")
    try:
        parts = data[:newline].decode("ascii").split(" ")
        tag, got_kind, ver, length, crc = parts
        version = int(ver.removeprefix("v"))
        expected_len = int(length.removeprefix("len="))
        expected_crc = int(crc.removeprefix("crc32="), 16)
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptIndexError(path, "malformed header line") from exc
    if tag != "#yioopy" or got_kind != kind:
        raise CorruptIndexError(path, f"not a {kind} file")
    if version > FORMAT_VERSION:
        raise IndexFormatTooNew(path, version, FORMAT_VERSION)
    payload = data[newline + 1:]
    if len(payload) != expected_len:
        raise CorruptIndexError(path, f"payload is {len(payload)} bytes, header says "
                                      f"{expected_len}")
    if zlib.crc32(payload) != expected_crc:
        raise CorruptIndexError(path, "payload checksum mismatch")
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptIndexError(path, "payload is not UTF-8") from exc


def write_text(path: PathLike, kind: str, text: str) -> None:
    atomic_write(path, frame_text(kind, text))


def read_text(path: PathLike, kind: str) -> str:
    with open(path, "rb") as handle:
        data = handle.read()
    return unframe_text(path, data, kind)


# -- append-only logs -------------------------------------------------------------------------

def log_header(kind: str) -> bytes:
    head = HEADER.pack(MAGIC, _kind_bytes(kind), FORMAT_VERSION, FLAG_LOG, 0, 0, 0)[:_HEAD_CRC_AT]
    return head + struct.pack(">I", zlib.crc32(head))


def check_log_header(path: PathLike, data: bytes, kind: str) -> None:
    _check_header(path, data, kind, FLAG_LOG)


class AppendLog:
    """An append-only file with a header; the caller tracks the committed length.

    ``open`` truncates anything past ``committed`` (a crashed writer's debris). ``append``
    returns the offset written at; ``sync`` makes everything appended durable.
    """

    def __init__(self, path: PathLike, kind: str, committed: int | None,
                 sync_dir: bool = True) -> None:
        """``sync_dir=False``: the caller fsyncs the directory (after creating several logs,
        or by replacing a file of the same directory) before anything names the new log."""
        self.path = Path(path)
        self.kind = kind
        self.dirty = False  # appended since the last sync
        exists = self.path.exists()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        size = os.fstat(self._fd).st_size
        if not exists or size == 0 or committed in (None, 0):
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, log_header(kind), 0)
            size = HEADER_SIZE
            committed = HEADER_SIZE
            os.fsync(self._fd)
            if sync_dir:
                fsync_dir(self.path.parent)
        else:
            check_log_header(self.path, os.pread(self._fd, HEADER_SIZE, 0), kind)
            if size < committed:
                os.close(self._fd)
                raise CorruptIndexError(self.path, f"file is {size} bytes, shorter than the "
                                                   f"committed {committed}")
            if size > committed:
                logger.info("truncating %s from %d to committed %d bytes", self.path, size,
                            committed)
                os.ftruncate(self._fd, committed)
        self.size = committed

    def append(self, data: bytes) -> int:
        offset = self.size
        view = memoryview(data)
        position = offset
        while view:
            written = os.pwrite(self._fd, view, position)
            view = view[written:]
            position += written
        self.size = position
        self.dirty = True
        return offset

    def sync(self) -> None:
        os.fdatasync(self._fd)  # data and size; the file's other metadata does not matter
        self.dirty = False

    @staticmethod
    def sync_all(logs: list[AppendLog]) -> None:
        """:meth:`sync` every log that was appended to, concurrently."""
        dirty = [log for log in logs if log.dirty]
        fsync_all([log._fd for log in dirty], data_only=True)
        for log in dirty:
            log.dirty = False

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class FileLock:
    """An exclusive, non-blocking ``flock`` on ``path``; released on ``release`` or exit."""

    def __init__(self, path: PathLike) -> None:
        self.path = Path(path)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(self._fd)
            raise IndexLockedError(f"{self.path} is held by another process") from exc

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1
