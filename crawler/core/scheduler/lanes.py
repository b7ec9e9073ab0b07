"""First-in first-out url files on disk: the folders of the seed's crawl queue.

Layer: ``crawler.core.scheduler``. A :class:`Lane` is one FIFO stored under a folder of the queue
(``UrlQueue/Tier3``, ``WaitRobotUrl/<host hash>``, ``CrawlDelayedHosts/<host hash>``...):

* files are ``<lane>/<day stamp>/<sequence>.txt.gz``; the day stamp (UTC ``YYYYMMDD``) is the day
  the file was started, the sequence number counts up per lane;
* each file is a concatenation of gzip members (so ``zcat`` reads it whole); a member holds up to
  ``buffer_limit`` records (Yioop's MAX_URL_BUFFER_BEFORE_WRITE, 500), one per line, ``\\n``
  terminated. A file is closed to new members when it would pass ``max_file_bytes`` (~1 MB) or
  the day changes. Members are compressed with ``mtime=0`` so the bytes depend only on the
  records (crash recovery replays writes and must reproduce them).

Records are pushed into an in-memory buffer that is written as one member when full; the reader
reads files in order, member by member, then the unwritten buffer. Durability is not this
module's job: the queue's journal makes every accepted record durable, and a checkpoint flushes
buffers, fsyncs the files and records each lane's :class:`LaneState` (files with their committed
lengths, read position, pending count). Files are only appended at a lane's last file and never
rewritten; after a crash, bytes past a committed length are truncated and the journal replays them.
"""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from crawler.core.scheduler.errors import CorruptQueueError

URL_FILES_EXTENSION = ".txt.gz"


@dataclass(slots=True)
class LaneContext:
    """What all lanes of one queue share: the root, write limits, the current day stamp, and
    the files and folders written since the last checkpoint (to fsync them)."""

    root: Path
    buffer_limit: int = 500
    max_file_bytes: int = 1_000_000
    day: str = "19700101"
    dirty_files: set[str] = field(default_factory=set)
    new_dirs: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class LaneState:
    """A lane as a checkpoint records it: ``files`` are ``(relative path, committed length)``
    from the read file on; ``read_offset`` is the byte offset of the member being read in
    ``files[0]`` and ``read_skip`` how many of its records were consumed."""

    rel_dir: str
    files: tuple[tuple[str, int], ...]
    read_offset: int
    read_skip: int
    pending: int
    next_seq: int


class Lane:
    """One FIFO of text records (no tabs needed here; no ``\\n`` allowed)."""

    __slots__ = ("_ctx", "_mem_end", "_rbuf", "_rcache", "_wbuf", "_wstart", "files",
                 "next_seq", "pending", "read_index", "read_offset", "read_skip", "rel_dir")

    def __init__(self, ctx: LaneContext, rel_dir: str, state: LaneState | None = None) -> None:
        self._ctx = ctx
        self.rel_dir = rel_dir
        self.files: list[list[str | int]] = []
        self.read_index = 0
        self.read_offset = 0
        self.read_skip = 0
        self.pending = 0
        self.next_seq = 0
        if state is not None:
            self.files = [[rel, length] for rel, length in state.files]
            self.read_offset = state.read_offset
            self.read_skip = state.read_skip
            self.pending = state.pending
            self.next_seq = state.next_seq
        self._wbuf: list[str] = []
        self._wstart = 0
        self._rbuf: list[str] | None = None
        self._mem_end = 0
        self._rcache: bytes | None = None

    def __len__(self) -> int:
        return self.pending

    # -- writing ----------------------------------------------------------------------------

    def push(self, record: str) -> None:
        self._wbuf.append(record)
        self.pending += 1
        if len(self._wbuf) - self._wstart >= self._ctx.buffer_limit:
            self.flush()

    def flush(self) -> None:
        """Write the buffered records as one gzip member (no fsync)."""
        records = self._wbuf[self._wstart:]
        self._wbuf = []
        self._wstart = 0
        if not records:
            return
        data = ("\n".join(records) + "\n").encode("utf-8", "surrogatepass")
        member = gzip.compress(data, compresslevel=5, mtime=0)
        ctx = self._ctx
        last = self.files[-1] if self.files else None
        if (last is None or self._day_of(str(last[0])) != ctx.day
                or (int(last[1]) > 0 and int(last[1]) + len(member) > ctx.max_file_bytes)):
            rel = f"{self.rel_dir}/{ctx.day}/{self.next_seq:06d}{URL_FILES_EXTENSION}"
            self.next_seq += 1
            last = [rel, 0]
            self.files.append(last)
            self._make_dirs(rel)
        rel, length = str(last[0]), int(last[1])
        path = ctx.root / rel
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            view = memoryview(member)
            offset = length
            while view:
                written = os.pwrite(fd, view, offset)
                view = view[written:]
                offset += written
        finally:
            os.close(fd)
        last[1] = length + len(member)
        ctx.dirty_files.add(rel)

    def _make_dirs(self, rel: str) -> None:
        folder = (self._ctx.root / rel).parent
        if folder.is_dir():
            return
        missing = []
        probe = folder
        while not probe.exists():
            missing.append(probe)
            probe = probe.parent
        folder.mkdir(parents=True, exist_ok=True)
        for created in missing:
            self._ctx.new_dirs.add(str(created.relative_to(self._ctx.root)))

    @staticmethod
    def _day_of(rel: str) -> str:
        return rel.rsplit("/", 2)[-2]

    # -- reading ----------------------------------------------------------------------------

    def pop(self) -> str | None:
        """The oldest record, or None when the lane is empty."""
        while True:
            rbuf = self._rbuf
            if rbuf is not None:
                if self.read_skip < len(rbuf):
                    record = rbuf[self.read_skip]
                    self.read_skip += 1
                    self.pending -= 1
                    return record
                self.read_offset = self._mem_end
                self.read_skip = 0
                self._rbuf = None
            if self.read_index < len(self.files):
                length = int(self.files[self.read_index][1])
                if self.read_offset < length:
                    self._load_member(length)
                    continue
                if self.read_index + 1 < len(self.files):
                    self.read_index += 1
                    self.read_offset = 0
                    self._rcache = None
                    continue
            break
        if self._wstart < len(self._wbuf):
            record = self._wbuf[self._wstart]
            self._wstart += 1
            self.pending -= 1
            if self._wstart == len(self._wbuf):
                self._wbuf = []
                self._wstart = 0
            return record
        return None

    def pop_all(self) -> list[str]:
        records = []
        while (record := self.pop()) is not None:
            records.append(record)
        return records

    def _load_member(self, length: int) -> None:
        rel = str(self.files[self.read_index][0])
        if self._rcache is None or len(self._rcache) < length:
            with open(self._ctx.root / rel, "rb") as handle:
                self._rcache = handle.read(length)
            if len(self._rcache) < length:
                raise CorruptQueueError("url file shorter than its committed length", rel)
        decoder = zlib.decompressobj(31)
        view = memoryview(self._rcache)[self.read_offset:length]
        try:
            data = decoder.decompress(view)
        except zlib.error as exc:
            raise CorruptQueueError(f"bad gzip member at {self.read_offset}: {exc}", rel) from None
        if not decoder.eof:
            raise CorruptQueueError(f"truncated gzip member at {self.read_offset}", rel)
        self._mem_end = length - len(decoder.unused_data)
        text = data.decode("utf-8", "surrogatepass")
        self._rbuf = text.split("\n")[:-1]

    # -- checkpoints ------------------------------------------------------------------------

    def checkpoint(self) -> tuple[LaneState, list[str]]:
        """Flush, then return the lane's state and the files it no longer needs (already read).
        The in-memory file list is trimmed to match the state."""
        self.flush()
        garbage = [str(f[0]) for f in self.files[: self.read_index]]
        if self.read_index:
            self.files = self.files[self.read_index:]
            self.read_index = 0
        if self._rbuf is not None and self.read_skip >= len(self._rbuf):
            self.read_offset = self._mem_end
            self.read_skip = 0
            self._rbuf = None
        state = LaneState(self.rel_dir, tuple((str(r), int(n)) for r, n in self.files),
                          self.read_offset, self.read_skip, self.pending, self.next_seq)
        return state, garbage

    def all_files(self) -> list[str]:
        return [str(f[0]) for f in self.files]
