"""The dictionary's node format: what one node of ``dictionary/nodes.G.btr`` holds.

Layer: ``indexer.core``. Shared by the tree (:mod:`indexer.core.dictionary.tree`, which documents the
files) and its streaming rebuild (:mod:`indexer.core.dictionary.stream`). The dictionary is the
B+-tree of the seed document "Yioop Search Engine Ranking Mechanisms" (term_id to the sorted list
of partition info records).

A node at offset ``o`` of the node file::

    u8 kind (0 leaf, 1 internal)  u32 payload length  u32 crc32 of payload  payload

A leaf's payload is records of the record codec, ``term_id:BLOB`` then repeated
``partition docs occurrences offset length``, in key order; an internal node's payload is
records ``key:BLOB child:INT`` (the least key under each child, the child's offset).
Because every record ends at its 0xFF separator, the payloads of consecutive leaves laid end to
end are one valid table of their records: the streaming code decodes and encodes many leaves
in one column-wise pass and cuts the bytes at leaf boundaries.
"""

from __future__ import annotations

import struct
import zlib

from ..files.packed_table import PackedTableTool

MANIFEST = "MANIFEST"
MANIFEST_KIND = "dictionary"
NODE_KIND = "btree"
LEAF, INTERNAL = 0, 1
RECORD_WIDTH = 5  # partition, docs, occurrences, offset, length
LEAF_TOOL = PackedTableTool.of(
    "term_id:BLOB", repeat="partition:INT docs:INT occurrences:INT offset:INT length:INT")
INTERNAL_TOOL = PackedTableTool.of("key:BLOB child:INT")
NODE_HEAD = struct.Struct(">BII")
NODE_FILE_PATTERN = "nodes.*.btr"


def node_bytes(kind: int, payload: bytes) -> bytes:
    """A node as it is appended to the node file: its header, then ``payload``."""
    return NODE_HEAD.pack(kind, len(payload), zlib.crc32(payload)) + payload


def node_file_name(generation: int) -> str:
    """The node file of generation ``generation`` (a compaction or a rebuild adds one)."""
    return f"nodes.{generation}.btr"


def generation_of(name: str) -> int | None:
    """The generation of a node file's name, or None when ``name`` is not one."""
    parts = name.split(".")
    if len(parts) != 3 or parts[0] != "nodes" or parts[2] != "btr" or not parts[1].isdigit():
        return None
    return int(parts[1])
