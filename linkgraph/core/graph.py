"""The web graph: nodes, outlinks and inlinks as compact arrays (Nutch's WebGraph, seed 002).

Layer: ``linkgraph.core`` (pure Python + numpy). Built by :mod:`.builder` from a crawl's
bundles, read by :mod:`.linkrank`, :mod:`.loops`, :mod:`.trust`, :mod:`.fields` and the dumpers.

Invariants of a :class:`WebGraph` with ``n`` nodes and ``E`` edges:

* Node ids are ``int32`` ``0..n-1`` in increasing url-hash order, so ``url_hash`` is sorted and
  unique and a url is found by binary search. The url hash is :func:`indexer.core.ids.hash8` of
  the url read as a big-endian ``uint64`` (the first 8 bytes of a doc_id); the host hash is the
  same of the url's lower-case host name.
* Outlinks are CSR by source: the targets of node ``u`` are ``out_idx[out_ptr[u]:out_ptr[u+1]]``,
  ascending, without duplicates and without self-links. An *edge id* is a position in
  ``out_idx``; per-edge data (anchor text, loop marks) is kept in edge-id order.
* Inlinks are CSR by target: the sources of ``v`` are ``in_idx[in_ptr[v]:in_ptr[v+1]]``
  (ascending), and ``in_edge`` gives each inlink's edge id. There is no cap on inlinks.
* ``fetched_at`` is the fetch time (seconds) of the record that gave a node its outlinks, NaN for
  nodes that are only link targets. Links from a newer fetch replace all of a node's older links
  (see :class:`.builder.WebGraphBuilder`).
* ``score`` (LinkRank, a probability vector) and ``trust`` (signed, see :mod:`.trust`) are zero
  until the jobs that compute them have run.

On disk (see :func:`save_graph`) a graph is a folder of ``.npy`` files and ``manifest.json``.
The manifest is written last (temp + fsync + rename) and names, for each array, its file,
dtype, shape and CRC-32; files carry the generation in their name, so a reader that has mapped
the old generation keeps reading it while a writer swaps in a new one.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.core.errors import CorruptGraphError, GraphFormatTooNew, GraphNotFound
from indexer.core.files.storage import atomic_stream, fsync_dir
from indexer.core.urls import as_hash_array, hashes_of, host_of, registered_domain, url_hash

logger = logging.getLogger(__name__)

FORMAT = "webgraph"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"

U64 = npt.NDArray[np.uint64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

# name -> dtype of every array a stored graph holds (loops is optional).
ARRAYS: dict[str, str] = {
    "url_hash": "<u8", "host_hash": "<u8", "url_offsets": "<i8", "url_blob": "u1",
    "fetched_at": "<f8", "out_ptr": "<i8", "out_idx": "<i4", "in_ptr": "<i8", "in_idx": "<i4",
    "in_edge": "<i8", "anchor_offsets": "<i8", "anchor_blob": "u1", "score": "<f8",
    "trust": "<f8",
}
OPTIONAL = {"loops": "u1"}


def _encode_strings(strings: Sequence[str]) -> tuple[I64, npt.NDArray[np.uint8]]:
    encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()


def _sort_with_positions(keys: U64, key_bits: int) -> tuple[U64, I64]:
    """``keys`` sorted, and for each sorted key its position in ``keys`` (stable for ties)."""
    count = int(keys.shape[0])
    pos_bits = max(count - 1, 0).bit_length()
    if key_bits + pos_bits <= 64:
        packed = np.sort((keys << np.uint64(pos_bits)) | np.arange(count, dtype=np.uint64))
        mask = np.uint64((1 << pos_bits) - 1)
        return packed >> np.uint64(pos_bits), (packed & mask).astype(np.int64)
    order = np.argsort(keys, kind="stable")
    return keys[order], order.astype(np.int64)


def _distinct_edges(key: U64, keep: npt.NDArray[np.bool_], n: int, *,
                    first_input: bool) -> tuple[U64, I64 | None]:
    """The distinct (source * n + target) keys of the kept edges, sorted, and with
    ``first_input`` the input index of the first edge of each key (the input position is
    packed into the low bits of the key when it fits: numpy's sort is several times faster
    than a stable argsort)."""
    if not first_input:
        key_sorted = np.sort(key)
        first = np.ones(key_sorted.shape[0], dtype=bool)
        first[1:] = key_sorted[1:] != key_sorted[:-1]
        return key_sorted[first], None
    edge_in = np.flatnonzero(keep)
    key_sorted, key_order = _sort_with_positions(key, max(n * n - 1, 0).bit_length())
    first = np.ones(key_sorted.shape[0], dtype=bool)
    first[1:] = key_sorted[1:] != key_sorted[:-1]
    return key_sorted[first], edge_in[key_order[first]]


def _node_texts(order: I64, urls: Sequence[str] | None,
                host_hash: U64 | None) -> tuple[I64, npt.NDArray[np.uint8], U64]:
    """Url offsets and blob, and host hashes, of the nodes in url-hash order (``order``: the
    input position of each): empty urls and zero host hashes when neither is given."""
    n = int(order.shape[0])
    if urls is not None:
        if len(urls) != n:
            raise ValueError("one url per node needed")
        url_offsets, url_blob = _encode_strings([urls[i] for i in order.tolist()])
    else:
        url_offsets, url_blob = np.zeros(n + 1, dtype=np.int64), np.zeros(0, np.uint8)
    if host_hash is not None:
        hosts = np.asarray(host_hash, dtype=np.uint64)[order]
    elif urls is not None:
        hosts = hashes_of([host_of(urls[i]) for i in order.tolist()])
    else:
        hosts = np.zeros(n, dtype=np.uint64)
    return url_offsets, url_blob, hosts


def _decode(offsets: I64, blob: npt.NDArray[np.uint8], i: int) -> str:
    start, end = int(offsets[i]), int(offsets[i + 1])
    return bytes(blob[start:end]).decode("utf-8", "surrogatepass")


@dataclass(slots=True)
class WebGraph:
    """A web graph held in arrays (see the module docstring for the invariants)."""

    url_hash: U64
    host_hash: U64
    url_offsets: I64
    url_blob: npt.NDArray[np.uint8]
    fetched_at: F64
    out_ptr: I64
    out_idx: I32
    in_ptr: I64
    in_idx: I32
    in_edge: I64
    anchor_offsets: I64
    anchor_blob: npt.NDArray[np.uint8]
    score: F64
    trust: F64
    loops: npt.NDArray[np.uint8] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    # -- sizes and lookups --------------------------------------------------------------------

    @property
    def n(self) -> int:
        return int(self.url_hash.shape[0])

    @property
    def edges(self) -> int:
        return int(self.out_idx.shape[0])

    @property
    def out_count(self) -> I64:
        return np.diff(self.out_ptr)

    @property
    def in_count(self) -> I64:
        return np.diff(self.in_ptr)

    def url(self, node: int) -> str:
        return _decode(self.url_offsets, self.url_blob, node)

    def urls(self, nodes: Any) -> list[str]:
        return [self.url(int(i)) for i in np.asarray(nodes).reshape(-1)]

    def anchor(self, edge: int) -> str:
        return _decode(self.anchor_offsets, self.anchor_blob, edge)

    def node_ids(self, hashes: Any) -> I64:
        """Node id of each url hash, -1 where the graph has no such node (vectorised)."""
        wanted = as_hash_array(hashes)
        if self.n == 0:
            return np.full(wanted.shape[0], -1, dtype=np.int64)
        pos = np.searchsorted(self.url_hash, wanted)
        pos = np.minimum(pos, self.n - 1)
        return np.where(self.url_hash[pos] == wanted, pos, -1).astype(np.int64)

    def node_id(self, url: str) -> int:
        """Node id of a url, or -1."""
        return int(self.node_ids(np.array([url_hash(url)], dtype=np.uint64))[0])

    def edge_sources(self) -> I32:
        """Source node of every edge, in edge-id order."""
        return np.repeat(np.arange(self.n, dtype=np.int32), self.out_count)

    def same_host(self) -> npt.NDArray[np.bool_]:
        """Per edge: do source and target have the same host?"""
        return self.host_hash[self.edge_sources()] == self.host_hash[self.out_idx]

    def domain_hash(self) -> U64:
        """Per node, the hash of its host's registered domain (:func:`indexer.core.urls.
        registered_domain`, hashed as urls are), worked out once per distinct host from a url
        of that host; a graph without urls (a synthetic one) counts each host as its own
        domain."""
        hosts = np.asarray(self.host_hash)
        if self.n == 0 or int(self.url_offsets[-1]) == 0:
            return hosts.copy()
        _, first, inverse = np.unique(hosts, return_index=True, return_inverse=True)
        domains = [registered_domain(host_of(self.url(int(i)))) for i in first.tolist()]
        return hashes_of(domains)[inverse.reshape(-1)]

    def outlinks(self, node: int) -> tuple[I32, I64]:
        """(targets, edge ids) of a node's outlinks."""
        start, end = int(self.out_ptr[node]), int(self.out_ptr[node + 1])
        return np.asarray(self.out_idx[start:end]), np.arange(start, end, dtype=np.int64)

    def inlinks(self, node: int) -> tuple[I32, I64]:
        """(sources, edge ids) of a node's inlinks."""
        start, end = int(self.in_ptr[node]), int(self.in_ptr[node + 1])
        return np.asarray(self.in_idx[start:end]), np.asarray(self.in_edge[start:end])

    def with_scores(self, score: F64 | None = None, trust: F64 | None = None) -> WebGraph:
        """A copy sharing every array but the new node scores."""
        out = replace(self)
        if score is not None:
            if score.shape != (self.n,):
                raise ValueError("score must have one value per node")
            out.score = np.asarray(score, dtype=np.float64)
        if trust is not None:
            if trust.shape != (self.n,):
                raise ValueError("trust must have one value per node")
            out.trust = np.asarray(trust, dtype=np.float64)
        return out

    def with_loops(self, loops: npt.NDArray[np.bool_], max_length: int) -> WebGraph:
        if loops.shape != (self.edges,):
            raise ValueError("loops must have one mark per edge")
        out = replace(self, meta={**self.meta, "loops_max_length": int(max_length)})
        out.loops = loops.astype(np.uint8)
        return out

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_edges(
        cls,
        node_hash: U64,
        src: Any,
        dst: Any,
        *,
        host_hash: U64 | None = None,
        urls: Sequence[str] | None = None,
        fetched_at: F64 | None = None,
        anchors: Sequence[str] | None = None,
    ) -> WebGraph:
        """Build a graph from node hashes and edges given as positions in ``node_hash``.

        ``node_hash`` must be unique. Duplicate edges keep the first edge's anchor (first in the
        input order); self-links are dropped. ``urls``/``anchors`` are optional (a synthetic
        graph has none): missing urls and anchors read as ''.
        """
        node_hash = np.asarray(node_hash, dtype=np.uint64)
        n = int(node_hash.shape[0])
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        if src.shape != dst.shape:
            raise ValueError("src and dst differ in length")
        if n >= 2**31 - 1:
            raise ValueError("too many nodes for int32 ids")
        order = np.argsort(node_hash, kind="stable")
        sorted_hash = node_hash[order]
        if n > 1 and np.any(sorted_hash[1:] == sorted_hash[:-1]):
            raise ValueError("node hashes are not unique")
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        s, d = rank[src], rank[dst]
        keep = s != d
        key = (s * n + d)[keep].astype(np.uint64)
        del s, d
        key_sorted, chosen = _distinct_edges(key, keep, n, first_input=anchors is not None)
        del key, keep
        big_n = np.uint64(max(n, 1))
        e_src = (key_sorted // big_n).astype(np.int32)
        e_dst = (key_sorted % big_n).astype(np.int32)
        del key_sorted
        out_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(e_src, minlength=n), out=out_ptr[1:])
        # Inlinks: edge ids grouped by target; sources stay ascending within a target.
        _, in_order = _sort_with_positions(e_dst.astype(np.uint64), max(n - 1, 0).bit_length())
        in_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(e_dst, minlength=n), out=in_ptr[1:])
        in_idx = e_src[in_order]
        del e_src
        url_offsets, url_blob, hosts = _node_texts(order, urls, host_hash)
        e = int(e_dst.shape[0])
        if anchors is not None and chosen is not None:
            anchor_offsets, anchor_blob = _encode_strings([anchors[i] for i in chosen.tolist()])
        else:
            anchor_offsets, anchor_blob = np.zeros(e + 1, dtype=np.int64), np.zeros(0, np.uint8)
        fetched = (np.full(n, np.nan) if fetched_at is None
                   else np.asarray(fetched_at, dtype=np.float64)[order])
        return cls(
            url_hash=sorted_hash, host_hash=hosts, url_offsets=url_offsets, url_blob=url_blob,
            fetched_at=fetched, out_ptr=out_ptr, out_idx=e_dst, in_ptr=in_ptr,
            in_idx=in_idx, in_edge=in_order.astype(np.int64), anchor_offsets=anchor_offsets,
            anchor_blob=anchor_blob, score=np.zeros(n), trust=np.zeros(n),
        )

    @classmethod
    def empty(cls) -> WebGraph:
        return cls.from_edges(np.zeros(0, np.uint64), [], [])


# -- storage -----------------------------------------------------------------------------------


def crc_of(array: np.ndarray) -> int:
    data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return zlib.crc32(memoryview(data)) & 0xFFFFFFFF


def write_array(path: Path, array: np.ndarray) -> dict[str, Any]:
    """Write one array as .npy atomically; return its manifest entry."""
    array = np.ascontiguousarray(array)
    atomic_stream(path, lambda h: np.save(h, array, allow_pickle=False))
    return {"file": path.name, "dtype": array.dtype.str, "shape": list(array.shape),
            "crc32": crc_of(array)}


def read_array(folder: Path, entry: dict[str, Any], *, mmap: bool, verify: bool) -> np.ndarray:
    path = folder / entry["file"]
    try:
        shape = tuple(entry["shape"])
        empty = int(np.prod(shape)) == 0
        array = np.load(path, mmap_mode=None if (empty or not mmap) else "r",
                        allow_pickle=False)
    except FileNotFoundError as exc:
        raise CorruptGraphError(path, "file missing") from exc
    except ValueError as exc:
        raise CorruptGraphError(path, f"not a valid .npy file: {exc}") from exc
    if array.dtype.str != entry["dtype"] or array.shape != shape:
        raise CorruptGraphError(path, f"expected {entry['dtype']}{shape}, "
                                      f"found {array.dtype.str}{array.shape}")
    if verify and crc_of(array) != entry["crc32"]:
        raise CorruptGraphError(path, "checksum mismatch")
    return array


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise GraphNotFound(f"no web graph in {folder}") from exc
    except ValueError as exc:
        raise CorruptGraphError(path, "manifest is not JSON") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CorruptGraphError(path, "not a web graph manifest")
    if int(manifest.get("version", 0)) > FORMAT_VERSION:
        raise GraphFormatTooNew(path, f"format version {manifest['version']} is newer than "
                                      f"{FORMAT_VERSION}")
    return manifest


def save_graph(graph: WebGraph, folder: str | os.PathLike[str],
               changed: Sequence[str] | None = None) -> WebGraph:
    """Store ``graph`` in ``folder`` as a new generation; return it bound to the stored files.

    With ``changed`` (names of arrays) and an existing graph in the folder, only those arrays
    are written and the others keep their files (used to store scores or loops).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        old = read_manifest(folder)
    except GraphNotFound:
        old = None
    generation = int(old["generation"]) + 1 if old else 1
    names = list(ARRAYS) + (["loops"] if graph.loops is not None else [])
    files: dict[str, Any] = {}
    for name in names:
        if old and changed is not None and name not in changed and name in old["files"]:
            files[name] = old["files"][name]
            continue
        files[name] = write_array(folder / f"{name}.{generation}.npy", getattr(graph, name))
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, "generation": generation,
                "nodes": graph.n, "edges": graph.edges, "meta": graph.meta, "files": files}
    text = json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8")
    atomic_stream(folder / MANIFEST, lambda h: h.write(text))
    fsync_dir(folder)
    keep = {entry["file"] for entry in files.values()} | {MANIFEST}
    for path in folder.glob("*.npy"):
        if path.name not in keep:
            path.unlink(missing_ok=True)
    logger.info("web graph generation %d stored in %s: %d nodes, %d edges", generation, folder,
                graph.n, graph.edges)
    return load_graph(folder)


def load_graph(folder: str | os.PathLike[str], *, mmap: bool = True,
               verify: bool = False) -> WebGraph:
    """Open a stored graph (arrays memory-mapped unless ``mmap=False``)."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    files = manifest["files"]
    missing = [name for name in ARRAYS if name not in files]
    if missing:
        raise CorruptGraphError(folder / MANIFEST, f"arrays missing: {', '.join(missing)}")
    arrays = {name: read_array(folder, files[name], mmap=mmap, verify=verify)
              for name in (*ARRAYS, *(k for k in OPTIONAL if k in files))}
    n, e = int(manifest["nodes"]), int(manifest["edges"])
    if arrays["url_hash"].shape != (n,) or arrays["out_idx"].shape != (e,):
        raise CorruptGraphError(folder / MANIFEST, "node or edge count does not match")
    graph = WebGraph(**arrays, meta=dict(manifest.get("meta", {})), path=folder)
    if graph.loops is not None and graph.loops.shape != (e,):
        raise CorruptGraphError(folder / MANIFEST, "loop marks do not match the edges")
    return graph
