"""The DictionaryUpdater: merges closed partitions into the B+-tree dictionary.

Layer: ``indexer.core``. Runs as its own process (``python -m indexer.core.dictionary.updater BUNDLE``,
or a ``run_dictionary_updater`` command in the glue) next to the indexer
(:class:`indexer.core.bundle.writer.IndexBundleWriter`) and any number of readers.

It never blocks either: it takes only ``dictionary/LOCK`` (never the writer's lock), reads only
closed partitions (immutable), writes only new dictionary nodes and publishes them by replacing
``dictionary/MANIFEST``. For each closed partition ``p == next_partition``: read
``positions_doc_map/p/last_entries``, merge its term records into the tree, commit the tree with
``next_partition = p + 1`` (one atomic MANIFEST replace), copy the number to
``next_partition.txt``, then delete ``last_entries`` (the seed: it is not needed once merged).
A crash at any point leaves either the old or the new MANIFEST; a repeated merge of the same
partition replaces its records, so rerunning is safe.

Memory does not grow with the dictionary: the partition's terms are decoded into columns
(:class:`indexer.core.dictionary.stream.TermBlock`, a chunk of records at a time) and
streamed with the tree's leaves into a new tree
(:meth:`indexer.core.dictionary.tree.BPlusTreeWriter.merge_blocks`).

A full disk is not a crash: :meth:`DictionaryUpdater.run_forever` logs a merge that failed with
``ENOSPC`` (or ``EDQUOT``), removes what the failed merge wrote (temporary files, the node file
of an unfinished compaction, the uncommitted tail of the node file), and tries again at each poll, waiting longer between tries, up to a minute, until space returns.

A merged partition re-written in importance order (:mod:`indexer.core.bundle.reorder`) has new
postings offsets: its MANIFEST says ``"merged": false`` (readers then use its own
last_entries) until its records are merged again (:func:`remerge_partition`, run by the
re-order itself and, after a crash in between, by :meth:`DictionaryUpdater.update`).
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..bundle.layout import (
    DICTIONARY,
    DOCUMENTS,
    LOCK,
    partition_dir,
    read_next_partition,
    read_partition_manifest,
    write_next_partition,
    write_partition_manifest,
)
from ..documents.store import read_parameters
from ..errors import CorruptIndexError
from ..files.packed_columns import unpack_columns
from ..files.packed_table import SEPARATOR, RecordFormatError
from ..files.storage import FileLock, read_framed, remove_temporaries
from ..partition.build import LAST_ENTRIES_TOOL
from ..runtime.gc_pause import gc_paused
from .node_format import RECORD_WIDTH
from .stream import TermBlock
from .tree import BPlusTree, BPlusTreeWriter

logger = logging.getLogger(__name__)

DECODE_CHUNK = 16384  # last_entries records decoded in one column-wise pass


class DictionaryUpdater:
    """Merge every closed, unmerged partition of a bundle into its dictionary."""

    def __init__(self, path: str | os.PathLike[str], *, leaf_capacity: int = 128,
                 fanout: int = 128) -> None:
        self.path = Path(path)
        self.leaf_capacity = leaf_capacity
        self.fanout = fanout

    def stale(self) -> list[int]:
        """Merged partitions whose dictionary records describe an older generation of their
        files (a re-order was killed before it merged the new records)."""
        tree = BPlusTree(self.path / DICTIONARY)
        try:
            merged = tree.next_partition
        finally:
            tree.close()
        out = []
        for number in range(merged):
            manifest = read_partition_manifest(self.path, number)
            if manifest is not None and manifest.get("merged") is False:
                out.append(number)
        return out

    def pending(self) -> list[int]:
        """Closed partitions not yet merged."""
        params = read_parameters(self.path / DOCUMENTS)
        tree = BPlusTree(self.path / DICTIONARY)
        try:
            start = tree.next_partition
        finally:
            tree.close()
        out = []
        for number in range(start, int(params["active_partition"])):
            manifest = read_partition_manifest(self.path, number)
            if manifest is None or manifest["state"] != "closed":
                break
            out.append(number)
        return out

    def update(self) -> list[int]:
        """Merge all pending partitions; return their numbers. Raises ``OSError`` when a
        write fails (a full disk), having removed what it wrote: the dictionary stays as its
        MANIFEST says, and the partitions stay pending."""
        tree_dir = self.path / DICTIONARY
        tree_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(tree_dir / LOCK)
        try:
            remove_temporaries(tree_dir)
            try:
                return self._update_locked(tree_dir)
            except OSError:
                remove_temporaries(tree_dir)
                _discard_uncommitted_nodes(tree_dir)
                raise
        finally:
            lock.release()

    def _update_locked(self, tree_dir: Path) -> list[int]:
        """:meth:`update`, holding ``dictionary/LOCK``."""
        todo = self.pending()
        stale = self.stale()
        self._sync_next_partition()
        if not todo and not stale:
            return []
        tree = BPlusTreeWriter(tree_dir, leaf_capacity=self.leaf_capacity,
                               fanout=self.fanout)
        try:
            for number in stale:
                with gc_paused():
                    remerge_partition(tree, self.path, number)
            for number in todo:
                with gc_paused():
                    self._merge(tree, number)
        finally:
            tree.close()
        return todo

    def _sync_next_partition(self) -> None:
        """Repair next_partition.txt after a crash between MANIFEST and its copy."""
        tree = BPlusTree(self.path / DICTIONARY)
        try:
            number = tree.next_partition
        finally:
            tree.close()
        try:
            current = read_next_partition(self.path)
        except (FileNotFoundError, CorruptIndexError):
            current = None
        if current != number:
            write_next_partition(self.path, number)

    def _merge(self, tree: BPlusTreeWriter, number: int) -> None:
        manifest = read_partition_manifest(self.path, number)
        assert manifest is not None
        path = partition_dir(self.path, number) / manifest["files"]["last_entries"]
        count = _merge_term_table(tree, path, number)
        tree.commit(next_partition=number + 1)
        write_next_partition(self.path, number + 1)
        path.unlink(missing_ok=True)
        logger.info("partition %d merged into the dictionary: %d terms", number, count)

    def run_forever(self, poll_seconds: float = 2.0, stop: threading.Event | None = None,
                    parent: int | None = None) -> None:
        """:meth:`update` every ``poll_seconds`` until ``stop`` is set or, with ``parent``,
        until this process's parent is no longer that pid (the process that started the
        updater has died: the updater must not outlive it). A merge that found the disk full
        is logged and tried again later (see the module)."""
        stop = stop or threading.Event()
        wait = poll_seconds
        while not stop.is_set():
            if parent is not None and os.getppid() != parent:
                logger.info("parent process %d is gone: the dictionary updater stops", parent)
                return
            try:
                self.update()
                wait = poll_seconds
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                    raise
                wait = min(max(wait * 2, poll_seconds), 60.0)
                logger.warning("dictionary updater of %s: out of space (%s); partitions stay "
                               "pending, tried again in %.0f s", self.path, exc, wait)
            stop.wait(wait)


def _discard_uncommitted_nodes(tree_dir: Path) -> None:
    """After a failed merge (the caller holds ``dictionary/LOCK``): cut the node file back to
    the length MANIFEST commits, and delete node files newer than it (a compaction that failed
    before publishing its file). Readers never look past the committed length."""
    tree = BPlusTree(tree_dir)
    try:
        current_path, committed = tree.node_path, int(tree.manifest["committed"])
        current = int(tree.manifest["node_file"].split(".")[1])
    finally:
        tree.close()
    if not committed:
        current_path.unlink(missing_ok=True)  # no MANIFEST names it yet
    elif current_path.exists() and current_path.stat().st_size > committed:
        os.truncate(current_path, committed)
    for path in tree_dir.glob("nodes.*.btr"):
        generation = path.name.split(".")[1]
        if generation.isdigit() and int(generation) > current:
            path.unlink(missing_ok=True)


def _merge_term_table(tree: BPlusTreeWriter, path: Path, number: int) -> int:
    """Merge the term records of partition ``number``'s last_entries file at ``path`` into
    ``tree`` (replacing the partition's records of each term); return the number of terms.
    The table is decoded a chunk of records at a time into columns (:func:`term_blocks`): the
    merge holds the partition's terms as arrays, not as a tuple per term."""
    blocks = list(term_blocks(path, read_framed(path, "last_entries"), number))
    tree.merge_blocks(blocks)  # the payload is gone: the blocks hold the terms
    return sum(len(b) for b in blocks)


def term_blocks(path: Path, payload: bytes, number: int,
                chunk: int = DECODE_CHUNK) -> Iterator[TermBlock]:
    """The records of a last_entries ``payload`` as dictionary entries of partition
    ``number``, ``chunk`` records per block. Records end at their 0xFF separator (the record
    codec escapes it inside them), so the table is cut there and decoded piece by piece."""
    seps = np.flatnonzero(np.frombuffer(payload, dtype=np.uint8) == SEPARATOR)
    start = 0
    for first in range(0, len(seps), chunk):
        stop = int(seps[min(first + chunk, len(seps)) - 1]) + 1
        try:
            keys, ints, _, _ = unpack_columns(LAST_ENTRIES_TOOL, payload[start:stop])
        except RecordFormatError as exc:
            raise CorruptIndexError(path, str(exc)) from exc
        start = stop
        rep = np.empty((len(keys), RECORD_WIDTH), dtype=np.int64)
        rep[:, 0] = number
        rep[:, 1:] = ints[:, :4]
        yield TermBlock(keys, np.ones(len(keys), dtype=np.int64), rep)
    if start != len(payload):
        raise CorruptIndexError(path, "last record has no separator")


def remerge_partition(tree: BPlusTreeWriter, bundle: Path, number: int) -> None:
    """Point the dictionary at a merged partition's re-written files: merge the term records
    of the last_entries its MANIFEST names, commit, then mark the MANIFEST ``merged`` again
    and delete that last_entries. The caller holds ``dictionary/LOCK``; the MANIFEST must say
    ``"merged": false`` (readers use the last_entries until the mark is gone, and a reader
    that read the MANIFEST before the mark changed sees it change and takes its snapshot
    again, see :class:`indexer.core.bundle.reader.IndexBundleReader`)."""
    manifest = read_partition_manifest(bundle, number)
    if manifest is None or manifest.get("merged") is not False:
        raise CorruptIndexError(partition_dir(bundle, number), "partition is not awaiting a "
                                                                "re-merge")
    path = partition_dir(bundle, number) / manifest["files"]["last_entries"]
    count = _merge_term_table(tree, path, number)
    tree.commit()
    del manifest["merged"]
    write_partition_manifest(bundle, number, manifest)
    path.unlink(missing_ok=True)
    logger.info("partition %d merged again after its re-order: %d terms", number, count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Merge closed partitions into the dictionary")
    parser.add_argument("bundle")
    parser.add_argument("--loop", action="store_true", help="keep polling for new partitions")
    parser.add_argument("--poll", type=float, default=2.0)
    parser.add_argument("--parent", type=int, default=None,
                        help="with --loop: stop when this pid is no longer the parent process")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    updater = DictionaryUpdater(args.bundle)
    if args.loop:
        updater.run_forever(args.poll, parent=args.parent)
    else:
        updater.update()
    return 0


if __name__ == "__main__":
    sys.exit(main())
