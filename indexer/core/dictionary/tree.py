"""dictionary/: the on-disk B+-tree from term_id to per-partition posting information.

Layer: ``indexer.core``. Written only by the dictionary updater
(:mod:`indexer.core.dictionary.updater`, holding ``dictionary/LOCK``); read by
:mod:`indexer.core.bundle.reader` and :mod:`indexer.core.bundle.verify`.

Keys are term_ids (bytes, see :func:`indexer.core.ids.term_id`), compared bytewise. A value is
the sorted list of *partition info records* (partition, documents with the term, occurrences,
offset and length of the term's list in that partition's postings file).

Files::

    dictionary/MANIFEST       framed text (JSON): node file name, its committed length, root
                              node offset, height, number of terms, next_partition, live bytes
    dictionary/nodes.G.btr    append-only log of immutable nodes (their bytes: see
                              :mod:`indexer.core.dictionary.node_format`)

An internal node holds the least key under each child and the child's offset, in key order; the
first child also receives keys smaller than its key.

Two ways to merge a sorted batch, chosen by its size against the tree's:

* **copy-on-write** (a batch of fewer keys than the tree has leaves, about): rewrite only the
  leaves the batch touches (splitting any that exceed ``leaf_capacity`` into nearly equal
  leaves) and the internal nodes above them (splitting at ``fanout``; a root split adds a
  level), appended to the node file;
* **streaming rebuild** (a closed partition's terms, which touch most leaves; an empty tree):
  read the tree's leaves in key order a batch at a time, merge them with the batch and write
  the result bottom up into a new node file ``G + 1`` (an empty tree: into its own file)
  (:mod:`indexer.core.dictionary.stream`): memory is a batch of leaves plus the new terms as
  arrays, whatever the size of the tree, and no dead nodes are left behind.

New nodes are fsynced, and only then is MANIFEST replaced: readers holding an older MANIFEST
keep reading their older root, whose nodes are never modified. When dead nodes outweigh live
ones, the tree is compacted: streamed into a new node file like a rebuild with no new terms. A
node file MANIFEST no longer names is deleted once the new MANIFEST is published (open readers
keep their file descriptor; a reader that finds its node file gone reads MANIFEST again), and a
crash before that leaves it to the next writer to delete, as it deletes an unfinished rebuild's.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import CorruptIndexError
from ..files.packed_columns import pack_columns, unpack_columns
from ..files.packed_table import RecordFormatError
from ..files.storage import HEADER_SIZE, AppendLog, check_log_header, read_text, write_text
from .node_format import (
    INTERNAL,
    INTERNAL_TOOL,
    LEAF,
    LEAF_TOOL,
    MANIFEST,
    MANIFEST_KIND,
    NODE_FILE_PATTERN,
    NODE_HEAD,
    NODE_KIND,
    generation_of,
    node_bytes,
    node_file_name,
)
from .stream import TermBlock, TreeBuilder, checked_blocks, leaf_blocks, merge_streams

logger = logging.getLogger(__name__)

__all__ = ["INTERNAL", "LEAF", "MANIFEST", "BPlusTree", "BPlusTreeWriter", "PartitionInfo",
           "TermBlock"]
_CACHE_LIMIT = 8192  # nodes a reader keeps decoded
_WRITER_CACHE_LIMIT = 256  # nodes the writer keeps: its memory must not grow with the tree
_OPEN_TRIES = 5

Record = tuple[int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """One partition's entry for a term: the seed's partition info record."""

    partition: int
    docs: int
    occurrences: int
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class _Node:
    kind: int
    keys: list[bytes]
    values: list  # leaf: tuple[Record, ...] per key; internal: child offsets
    size: int


class BPlusTree:
    """A read-only snapshot of the dictionary (the MANIFEST as of construction)."""

    _cache_limit = _CACHE_LIMIT

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._fd = -1
        self._cache: dict[int, _Node] = {}
        self._load_manifest()

    # -- opening ----------------------------------------------------------------------------

    def _default_manifest(self) -> dict:
        return {"node_file": node_file_name(0), "committed": 0, "root": None, "height": 0,
                "terms": 0, "next_partition": 0, "live_bytes": 0}

    def _read_manifest(self) -> dict:
        path = self.directory / MANIFEST
        if not path.exists():
            return self._default_manifest()
        try:
            manifest = json.loads(read_text(path, MANIFEST_KIND))
            manifest["node_file"] = str(manifest["node_file"])
        except (ValueError, KeyError) as exc:
            raise CorruptIndexError(path, f"malformed manifest: {exc}") from exc
        return manifest

    def _load_manifest(self) -> None:
        """Read MANIFEST and open the node file it names. A compaction may publish a new node
        file and delete the old one between the two: the MANIFEST is then read again."""
        for _ in range(_OPEN_TRIES):
            self.manifest = self._read_manifest()
            try:
                self._open_nodes()
                return
            except FileNotFoundError:
                if self._read_manifest()["node_file"] == self.manifest["node_file"]:
                    break
        raise CorruptIndexError(self.directory / self.manifest["node_file"],
                                "node file named by MANIFEST is missing")

    def _open_nodes(self) -> None:
        """Open the node file the current ``manifest`` names (``FileNotFoundError`` when it
        is gone)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._cache.clear()
        self.node_path = self.directory / self.manifest["node_file"]
        if self.manifest["root"] is None:
            return
        self._fd = os.open(self.node_path, os.O_RDONLY)
        size = os.fstat(self._fd).st_size
        if size < self.manifest["committed"]:
            raise CorruptIndexError(self.node_path, f"file is {size} bytes, shorter than the "
                                                    f"committed {self.manifest['committed']}")
        check_log_header(self.node_path, os.pread(self._fd, HEADER_SIZE, 0), NODE_KIND)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @property
    def next_partition(self) -> int:
        return int(self.manifest["next_partition"])

    def __len__(self) -> int:
        return int(self.manifest["terms"])

    @property
    def height(self) -> int:
        return int(self.manifest["height"])

    # -- nodes ------------------------------------------------------------------------------

    def read_payload(self, offset: int) -> tuple[int, bytes]:
        """The kind and checked payload of the node at ``offset`` (not decoded, not cached)."""
        path = self.node_path
        if self._fd < 0:
            self._fd = os.open(path, os.O_RDONLY)
        committed = self.manifest["committed"]
        if offset < HEADER_SIZE or offset + NODE_HEAD.size > committed:
            raise CorruptIndexError(path, f"node offset {offset} outside the committed file")
        head = os.pread(self._fd, NODE_HEAD.size, offset)
        kind, length, crc = NODE_HEAD.unpack(head)
        end = offset + NODE_HEAD.size + length
        if kind not in (LEAF, INTERNAL) or end > committed:
            raise CorruptIndexError(path, f"node at {offset}: bad header")
        payload = os.pread(self._fd, length, offset + NODE_HEAD.size)
        if zlib.crc32(payload) != crc:
            raise CorruptIndexError(path, f"node at {offset}: checksum mismatch")
        return kind, payload

    def read_node(self, offset: int) -> _Node:
        """The decoded node at ``offset`` (kept in a bounded cache)."""
        node = self._cache.get(offset)
        if node is not None:
            return node
        kind, payload = self.read_payload(offset)
        path = self.node_path
        try:
            if kind == LEAF:
                keys, _, counts, rep = unpack_columns(LEAF_TOOL, payload)
                rows = list(map(tuple, rep.tolist()))
                ends = np.cumsum(counts).tolist()
                starts = [0, *ends[:-1]]
                vals: list = [tuple(rows[a:b]) for a, b in zip(starts, ends, strict=True)]
            else:
                keys, ints, _, _ = unpack_columns(INTERNAL_TOOL, payload)
                vals = ints[:, 0].tolist()
        except RecordFormatError as exc:
            raise CorruptIndexError(path, f"node at {offset}: {exc}") from exc
        if not keys or any(a >= b for a, b in zip(keys, keys[1:], strict=False)):
            raise CorruptIndexError(path, f"node at {offset}: keys empty or out of order")
        node = _Node(kind, keys, vals, NODE_HEAD.size + len(payload))
        self._remember(offset, node)
        return node

    def _remember(self, offset: int, node: _Node) -> None:
        if len(self._cache) >= self._cache_limit:
            self._cache.clear()
        self._cache[offset] = node

    # -- queries ----------------------------------------------------------------------------

    def lookup(self, key: bytes) -> tuple[Record, ...] | None:
        """The partition records of ``key``, or None."""
        offset = self.manifest["root"]
        if offset is None:
            return None
        for _ in range(self.height + 1):
            node = self.read_node(offset)
            if node.kind == LEAF:
                i = bisect.bisect_left(node.keys, key)
                if i < len(node.keys) and node.keys[i] == key:
                    return node.values[i]
                return None
            i = max(bisect.bisect_right(node.keys, key) - 1, 0)
            offset = node.values[i]
        raise CorruptIndexError(self.node_path, "tree deeper than its recorded height")

    def items(self, start: bytes | None = None, stop: bytes | None = None
              ) -> Iterator[tuple[bytes, tuple[Record, ...]]]:
        """Entries with ``start <= key < stop`` in key order (a range scan)."""
        root = self.manifest["root"]
        if root is None:
            return
        yield from self._scan(root, start, stop, self.height)

    def _scan(self, offset: int, start: bytes | None, stop: bytes | None, depth: int
              ) -> Iterator[tuple[bytes, tuple[Record, ...]]]:
        node = self.read_node(offset)
        if node.kind == LEAF:
            if depth != 0:
                raise CorruptIndexError(self.node_path, f"leaf at {offset} above the leaf level")
            i = 0 if start is None else bisect.bisect_left(node.keys, start)
            for key, value in zip(node.keys[i:], node.values[i:], strict=True):
                if stop is not None and key >= stop:
                    return
                yield key, value
            return
        if depth == 0:
            raise CorruptIndexError(self.node_path, f"internal node at {offset} at leaf level")
        i = 0 if start is None else max(bisect.bisect_right(node.keys, start) - 1, 0)
        for j in range(i, len(node.keys)):
            if stop is not None and node.keys[j] >= stop:
                return
            yield from self._scan(node.values[j], start, stop, depth - 1)

    def verify(self) -> int:
        """Read every node, check order across nodes and the term count; return the count."""
        previous = None
        count = 0
        for key, records in self.items():
            if previous is not None and key <= previous:
                raise CorruptIndexError(self.node_path, "keys out of order across leaves")
            parts = [r[0] for r in records]
            if parts != sorted(set(parts)):
                raise CorruptIndexError(self.node_path, "partition records out of order")
            previous = key
            count += 1
        if count != len(self):
            raise CorruptIndexError(self.node_path, f"{count} terms, MANIFEST says {len(self)}")
        return count

    def verify_log(self) -> int:
        """Check every node of the node file, reachable or not (dead nodes of earlier versions
        included), from the header to the committed length; return the number of nodes."""
        committed = self.manifest["committed"]
        if self.manifest["root"] is None:
            return 0
        if self._fd < 0:
            self._fd = os.open(self.node_path, os.O_RDONLY)
        offset = HEADER_SIZE
        count = 0
        while offset < committed:
            self._cache.pop(offset, None)
            node = self.read_node(offset)
            offset += node.size
            count += 1
        if offset != committed:
            raise CorruptIndexError(self.node_path, "last node runs past the committed length")
        return count


def _merge_records(old: Sequence[Record], new: Sequence[Record]) -> tuple[Record, ...]:
    if not old:
        return tuple(new)
    replaced = {r[0] for r in new}
    return tuple(sorted([r for r in old if r[0] not in replaced] + list(new)))


class BPlusTreeWriter(BPlusTree):
    """Copy-on-write updates of the dictionary. One per dictionary at a time (the caller holds
    ``dictionary/LOCK``). Call :meth:`merge` any number of times, then :meth:`commit`."""

    _cache_limit = _WRITER_CACHE_LIMIT

    def __init__(self, directory: str | os.PathLike[str], *, leaf_capacity: int = 128,
                 fanout: int = 128) -> None:
        if leaf_capacity < 2 or fanout < 2:
            raise ValueError("leaf_capacity and fanout must be at least 2")
        Path(directory).mkdir(parents=True, exist_ok=True)
        super().__init__(directory)
        self.leaf_capacity = leaf_capacity
        self.fanout = fanout
        self._remove_other_node_files()
        self._log = AppendLog(self.node_path, NODE_KIND, self.manifest["committed"] or None)
        self._pending = dict(self.manifest)
        self._published = dict(self.manifest)
        self._retired: list[Path] = []  # node files to delete once MANIFEST no longer names them

    def _remove_other_node_files(self) -> None:
        """Delete node files MANIFEST does not name: an unfinished rebuild's (a crash before
        its MANIFEST), or the one a published rebuild replaced (a crash before its deletion).
        Readers open only the file MANIFEST names (and read MANIFEST again if it is gone)."""
        for path in self.directory.glob(NODE_FILE_PATTERN):
            if generation_of(path.name) is not None and path.name != self.manifest["node_file"]:
                path.unlink(missing_ok=True)

    # -- writing nodes ----------------------------------------------------------------------

    def _encode(self, kind: int, keys: list[bytes], values: list) -> tuple[bytes, np.ndarray]:
        if kind == LEAF:
            counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
            rep = np.array([r for v in values for r in v], dtype=np.int64).reshape(-1, 5)
            return pack_columns(LEAF_TOOL, keys, np.zeros((len(keys), 0), np.int64), counts,
                                rep, record_ends=True)
        return pack_columns(INTERNAL_TOOL, keys, np.array(values, dtype=np.int64),
                            record_ends=True)

    def _write(self, kind: int, keys: list[bytes], values: list) -> int:
        payload, _ = self._encode(kind, keys, values)
        return self._append_node(kind, keys, values, payload)

    def _append_node(self, kind: int, keys: list[bytes], values: list, payload: bytes) -> int:
        data = node_bytes(kind, payload)
        offset = self._log.append(data)
        self._pending["committed"] = self._log.size
        self._pending["live_bytes"] += len(data)
        self._remember(offset, _Node(kind, keys, values, len(data)))
        return offset

    def _write_chunks(self, kind: int, keys: list[bytes], values: list, capacity: int
                      ) -> list[tuple[bytes, int]]:
        count = len(keys)
        pieces = max(1, -(-count // capacity))
        bounds = [p * count // pieces for p in range(pieces + 1)]
        if pieces == 1:
            return [(keys[0], self._write(kind, keys, values))]
        # encode every piece in one column-wise pass, then cut the bytes at record ends
        data, ends = self._encode(kind, keys, values)
        out = []
        for a, b in zip(bounds, bounds[1:], strict=False):
            start = int(ends[a - 1]) if a else 0
            payload = data[start:int(ends[b - 1])]
            out.append((keys[a], self._append_node(kind, keys[a:b], values[a:b], payload)))
        return out

    def _retire(self, node: _Node) -> None:
        self._pending["live_bytes"] -= node.size

    def _merge_node(self, offset: int, depth: int, keys: list[bytes],
                    values: list[tuple[Record, ...]]) -> list[tuple[bytes, int]]:
        node = self.read_node(offset)
        self._retire(node)
        if node.kind == LEAF:
            out_keys: list[bytes] = []
            out_vals: list[tuple[Record, ...]] = []
            i = j = 0
            old_k, old_v = node.keys, node.values
            while i < len(old_k) or j < len(keys):
                if j >= len(keys) or (i < len(old_k) and old_k[i] < keys[j]):
                    out_keys.append(old_k[i])
                    out_vals.append(old_v[i])
                    i += 1
                elif i >= len(old_k) or keys[j] < old_k[i]:
                    out_keys.append(keys[j])
                    out_vals.append(tuple(values[j]))
                    self._pending["terms"] += 1
                    j += 1
                else:
                    out_keys.append(keys[j])
                    out_vals.append(_merge_records(old_v[i], values[j]))
                    i += 1
                    j += 1
            return self._write_chunks(LEAF, out_keys, out_vals, self.leaf_capacity)
        children: list[tuple[bytes, int]] = []
        bounds = [0] + [bisect.bisect_left(keys, k) for k in node.keys[1:]] + [len(keys)]
        for c, (ckey, child) in enumerate(zip(node.keys, node.values, strict=True)):
            a, b = bounds[c], bounds[c + 1]
            if a == b:
                children.append((ckey, child))
            else:
                children.extend(self._merge_node(child, depth - 1, keys[a:b], values[a:b]))
        return self._write_chunks(INTERNAL, [k for k, _ in children], [c for _, c in children],
                                  self.fanout)

    def _merge_in_place(self, keys: list[bytes], values: list[tuple[Record, ...]]) -> None:
        """Copy-on-write merge into the node file (a batch touching few leaves)."""
        root = self._pending["root"]
        height = self._pending["height"]
        if root is None:
            level = self._write_chunks(LEAF, keys, values, self.leaf_capacity)
            self._pending["terms"] += len(keys)
        else:
            level = self._merge_node(root, height, keys, values)
        while len(level) > 1:
            level = self._write_chunks(INTERNAL, [k for k, _ in level], [c for _, c in level],
                                       self.fanout)
            height += 1
        self._pending["root"] = level[0][1]
        self._pending["height"] = height

    # -- streaming rebuild ------------------------------------------------------------------

    def _streams(self, count: int) -> bool:
        """Whether a batch of ``count`` keys is merged by a streaming rebuild: into an empty
        tree, or when it is large enough to touch most leaves (about one key per leaf or
        more), which a copy-on-write merge would rewrite anyway, leaving the old ones dead."""
        return self._pending["root"] is None or \
            count * self.leaf_capacity >= int(self._pending["terms"])

    def _rebuild(self, new: Iterable[TermBlock], fresh: bool) -> None:
        """Write the pending tree merged with the sorted stream ``new`` as a new tree, leaf
        batch by leaf batch (:mod:`indexer.core.dictionary.stream`): into a new node file
        (``fresh``), or appended to the current one when the tree is empty. Nothing is
        visible to readers until :meth:`commit`; the old node file stays intact until then."""
        self.manifest = self._pending  # reads see our own uncommitted nodes
        if not fresh and self._pending["root"] is not None:
            raise ValueError("a tree with terms is rebuilt into a new node file")
        log = self._log
        if fresh:
            generation = max([generation_of(self._pending["node_file"]) or 0,
                              *(generation_of(p.name) or 0 for p in self._retired)]) + 1
            path = self.directory / node_file_name(generation)
            path.unlink(missing_ok=True)
            log = AppendLog(path, NODE_KIND, None)
        try:
            builder = TreeBuilder(log.append, self.leaf_capacity, self.fanout)
            old = checked_blocks(leaf_blocks(self),
                                 lambda m: CorruptIndexError(self.node_path, f"leaves: {m}"))
            for block in merge_streams(old, new):
                builder.add(block)
            root, height = builder.finish()
        except BaseException:
            if fresh:
                log.close()
                log.path.unlink(missing_ok=True)
            raise
        live = builder.bytes
        if fresh:
            self._retire_file(self.node_path)
            self._log.close()
            self._log = log
        else:
            live += int(self._pending["live_bytes"])
        self._pending.update(node_file=log.path.name, committed=log.size, root=root,
                             height=height, terms=builder.terms, live_bytes=live)
        self._open_nodes()

    def _retire_file(self, path: Path) -> None:
        """``path`` is replaced: delete it now if MANIFEST never named it (an earlier rebuild
        of this writer), else once the next MANIFEST is published."""
        committed = self.directory / self._committed_file
        if path == committed:
            self._retired.append(path)
        else:
            path.unlink(missing_ok=True)

    @property
    def _committed_file(self) -> str:
        return self._published["node_file"]

    # -- public -----------------------------------------------------------------------------

    def merge(self, items: Sequence[tuple[bytes, Sequence[Record]]]) -> None:
        """Add partition records for sorted, distinct keys (records of a partition already
        present for a key replace it). Not visible to readers until :meth:`commit`."""
        if not items:
            return
        keys = [k for k, _ in items]
        if any(a >= b for a, b in zip(keys, keys[1:], strict=False)):
            raise ValueError("merge needs sorted, distinct keys")
        if self._streams(len(keys)):
            self._rebuild([TermBlock.of_items(items)], fresh=self._pending["root"] is not None)
            return
        self.manifest = self._pending  # reads below see our own uncommitted nodes
        self._merge_in_place(keys, [tuple(v) for _, v in items])

    def merge_blocks(self, blocks: Sequence[TermBlock]) -> None:
        """:meth:`merge` for keys given as columns: ``blocks`` in order hold sorted, distinct
        keys. A batch that touches most leaves streams (memory: a batch of the old tree's
        leaves and ``blocks``, whatever the size of the tree)."""
        count = sum(len(b) for b in blocks)
        if not count:
            return
        if self._streams(count):
            checked = checked_blocks(blocks, lambda m: ValueError(f"merge needs {m}"))
            self._rebuild(checked, fresh=self._pending["root"] is not None)
        else:
            self.merge(TermBlock.concat(blocks).items())

    def insert(self, key: bytes, records: Sequence[Record]) -> None:
        self.merge([(key, records)])

    def commit(self, next_partition: int | None = None) -> None:
        """fsync the new nodes, then publish them by replacing MANIFEST atomically; compact
        when dead nodes outweigh live ones."""
        if next_partition is not None:
            self._pending["next_partition"] = next_partition
        self._publish()
        if self.manifest["committed"] > 2 * max(self.manifest["live_bytes"], 1 << 20):
            self.compact()

    def _publish(self) -> None:
        """fsync the node file, replace MANIFEST, then delete the node files it replaced
        (open readers keep their descriptors; a reader opening now reads MANIFEST again)."""
        self._log.sync()
        write_text(self.directory / MANIFEST, MANIFEST_KIND,
                   json.dumps(self._pending, sort_keys=True))
        self.manifest = dict(self._pending)
        self._pending = dict(self.manifest)
        self._published = dict(self.manifest)
        for path in self._retired:
            path.unlink(missing_ok=True)
        self._retired.clear()

    def compact(self) -> None:
        """Copy the pending tree into a new node file, leaf batch by leaf batch, and publish
        it; delete the old file. Memory: a batch of leaves, whatever the size of the tree."""
        self._rebuild((), fresh=True)
        self._publish()
        logger.info("dictionary compacted into %s (%d terms)", self.manifest["node_file"],
                    len(self))

    def close(self) -> None:
        self._log.close()
        super().close()
