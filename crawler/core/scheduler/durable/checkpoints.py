"""The crawl queue's files on disk: checkpoint generations, the commit point, and the url files'
recovery.

Layer: ``crawler.core.scheduler``. Layout under the queue's directory::

    LOCK                                   flock: one process per queue
    CURRENT                                the committed checkpoint generation <g> (text)
    QueueState/state.<g>.bin               the queue's state (format in .state)
    UrlExistsFilterBundle/bloom.<g>.bin    seen-url filter of queued urls (see .scalable_bloom)
    CLDData/cld.<g>.bin                    CLD hash -> SEEN, WEIGHTED_SEEN, WEIGHTED_INCOMING
    EtagExpires/etag.<g>.bin               url hash -> (ETag, Expires) (format in .state)
    ScheduleData/journal.<g>.log           every accepted call since checkpoint <g> (.journal)
    UrlQueue/, WaitRobotUrl/, CrawlDelayedHosts/   url files (.orders, .politeness, .lanes)

A checkpoint writes the generation-<g+1> files and an empty journal, then renames CURRENT (the
commit point), then deletes generation <g> and url files already read. Recovery loads
generation <g>, cuts url files back to their committed lengths and deletes the ones the
checkpoint does not know (:meth:`CheckpointStore.clean_url_files`), then replays journal <g>.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

from crawler.core.scheduler.cldtable import CldTable
from crawler.core.scheduler.durable.journal import JournalWriter
from crawler.core.scheduler.durable.legacy_state import (
    LEGACY_PICKLE_FORMAT,
    read_state_v1,
    read_validators_v1,
)
from crawler.core.scheduler.durable.state import (
    ETAG_MAGIC,
    FORMAT,
    STATE_MAGIC,
    QueueSnapshot,
    Validators,
    decode_state,
    decode_validators,
    encode_state,
    encode_validators,
)
from crawler.core.scheduler.durable.storage import (
    TMP_SUFFIX,
    atomic_write,
    fsync_dir,
    fsync_file,
    read_blob,
    write_blob,
)
from crawler.core.scheduler.errors import CorruptQueueError, QueueLockedError
from crawler.core.scheduler.filters.scalable_bloom import ScalableBloomFilter
from crawler.core.scheduler.lanes import URL_FILES_EXTENSION, LaneContext

logger = logging.getLogger(__name__)

STATE_DIR = "QueueState"
BLOOM_DIR = "UrlExistsFilterBundle"
CLD_DIR = "CLDData"
ETAG_DIR = "EtagExpires"
JOURNAL_DIR = "ScheduleData"
LANE_ROOTS = ("UrlQueue", "WaitRobotUrl", "CrawlDelayedHosts")
_GENERATION_FILES = ((STATE_DIR, "state"), (BLOOM_DIR, "bloom"), (CLD_DIR, "cld"),
                     (ETAG_DIR, "etag"), (JOURNAL_DIR, "journal"))


def lock_directory(root: Path) -> int:
    """Create ``root`` if needed and take its LOCK; returns the lock's file descriptor."""
    root.mkdir(parents=True, exist_ok=True)
    lock_fd = os.open(root / "LOCK", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock_fd)
        raise QueueLockedError(f"{root} is open in another process") from None
    return lock_fd


class CheckpointStore:
    """The generation files of one queue directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for folder in (STATE_DIR, BLOOM_DIR, CLD_DIR, ETAG_DIR, JOURNAL_DIR, *LANE_ROOTS):
            (root / folder).mkdir(exist_ok=True)

    def current(self) -> int | None:
        """The committed generation, or None for a new queue."""
        path = self.root / "CURRENT"
        if not path.exists():
            return None
        try:
            return int(path.read_text().strip())
        except ValueError:
            raise CorruptQueueError("CURRENT does not hold a generation", str(path)) from None

    def journal_path(self, gen: int) -> Path:
        return self.root / JOURNAL_DIR / f"journal.{gen}.log"

    def read(self, gen: int) -> tuple[QueueSnapshot, ScalableBloomFilter, CldTable, Validators]:
        state_path = self.root / STATE_DIR / f"state.{gen}.bin"
        version, payload = read_blob(state_path, STATE_MAGIC, FORMAT)
        if version == LEGACY_PICKLE_FORMAT:
            snapshot = read_state_v1(payload, str(state_path))
        else:
            snapshot = decode_state(payload, str(state_path))
        etag_path = self.root / ETAG_DIR / f"etag.{gen}.bin"
        version, payload = read_blob(etag_path, ETAG_MAGIC, FORMAT)
        if version == LEGACY_PICKLE_FORMAT:
            validators = read_validators_v1(payload, str(etag_path))
        else:
            validators = decode_validators(payload, str(etag_path))
        bloom = ScalableBloomFilter.load(self.root / BLOOM_DIR / f"bloom.{gen}.bin")
        cld = CldTable.load(self.root / CLD_DIR / f"cld.{gen}.bin")
        return snapshot, bloom, cld, validators

    def write(self, gen: int, snapshot: QueueSnapshot, bloom: ScalableBloomFilter, cld: CldTable,
              validators: Validators, *, sync: bool) -> JournalWriter:
        """Write generation ``gen`` and commit it; returns its (empty) journal."""
        write_blob(self.root / STATE_DIR / f"state.{gen}.bin", STATE_MAGIC, FORMAT,
                   encode_state(snapshot), sync=sync)
        bloom.save(self.root / BLOOM_DIR / f"bloom.{gen}.bin", sync=sync)
        cld.save(self.root / CLD_DIR / f"cld.{gen}.bin", sync=sync)
        write_blob(self.root / ETAG_DIR / f"etag.{gen}.bin", ETAG_MAGIC, FORMAT,
                   encode_validators(validators), sync=sync)
        journal_path = self.journal_path(gen)
        journal_path.unlink(missing_ok=True)
        journal = JournalWriter(journal_path, sync=sync)
        try:
            if sync:
                fsync_dir(journal_path.parent)
            atomic_write(self.root / "CURRENT", f"{gen}\n".encode(), sync=sync)
        except BaseException:
            journal.close()
            raise
        return journal

    def remove_temporaries(self) -> None:
        """Delete the temporary files of a checkpoint that failed (the commit point was not
        reached, so the committed generation is untouched)."""
        folders = [self.root, *(self.root / folder for folder, _ in _GENERATION_FILES)]
        for folder in folders:
            for path in folder.glob(f"*{TMP_SUFFIX}"):
                path.unlink(missing_ok=True)

    def remove_other_generations(self, gen: int) -> None:
        for folder, stem in _GENERATION_FILES:
            keep = (f"{stem}.{gen}.bin", f"{stem}.{gen}.log")
            for path in (self.root / folder).iterdir():
                if path.name not in keep:
                    path.unlink(missing_ok=True)

    # -- url files --------------------------------------------------------------------------

    def sync_url_files(self, ctx: LaneContext) -> None:
        """fsync the url files written since the last checkpoint and the folders holding
        them, deepest first."""
        for rel in sorted(ctx.dirty_files):
            path = self.root / rel
            if path.exists():
                fsync_file(path)
        parents = {str(Path(rel).parent) for rel in ctx.new_dirs}
        parents |= {str(Path(rel).parent) for rel in ctx.dirty_files}
        for rel in sorted(parents, key=len, reverse=True):
            if (self.root / rel).is_dir():
                fsync_dir(self.root / rel)

    def remove_url_files(self, garbage: list[str]) -> None:
        """Delete url files already read, and the folders they leave empty."""
        stop = {self.root / name for name in LANE_ROOTS} | {self.root}
        for rel in garbage:
            (self.root / rel).unlink(missing_ok=True)
            folder = (self.root / rel).parent
            while folder not in stop:
                try:
                    folder.rmdir()
                except OSError:
                    break
                folder = folder.parent

    def clean_url_files(self, committed: dict[str, int]) -> None:
        """After loading a checkpoint: cut url files back to their ``committed`` lengths and
        delete the ones it does not reference (written after it, or already read)."""
        removed = truncated = 0
        for top in LANE_ROOTS:
            base = self.root / top
            for dirpath, _dirnames, filenames in os.walk(base, topdown=False):
                folder = Path(dirpath)
                for name in filenames:
                    path = folder / name
                    length = committed.get(str(path.relative_to(self.root)))
                    if length is None or not name.endswith(URL_FILES_EXTENSION):
                        path.unlink()
                        removed += 1
                    elif self._truncate(path, length):
                        truncated += 1
                if folder != base:
                    try:
                        folder.rmdir()
                    except OSError:  # not empty: it holds committed files
                        pass
        missing = [rel for rel in committed if not (self.root / rel).exists()]
        if missing:
            raise CorruptQueueError(f"{len(missing)} committed url files are missing",
                                    missing[0])
        if removed or truncated:
            logger.info("crawl queue %s: removed %d stray url files, truncated %d",
                        self.root, removed, truncated)

    def _truncate(self, path: Path, length: int) -> bool:
        size = path.stat().st_size
        if size < length:
            raise CorruptQueueError(f"url file has {size} bytes, checkpoint committed {length}",
                                    str(path.relative_to(self.root)))
        if size > length:
            os.truncate(path, length)
            return True
        return False
