"""Per block of postings, what bounds its documents' scores: the partition's block maxima file.

Layer: ``indexer.core``. Written by :func:`indexer.core.partition.build.build_partition` beside
the postings it describes (the file kind ``block_maxima``, named in the partition's MANIFEST);
read by :meth:`indexer.core.bundle.reader.IndexBundleReader.block_maxima` for the block-max
pruning of :mod:`ranking.core.shard.block_max` (docs/exact-topk.md, sections 3 and 9) and to
jump straight to a block in :meth:`indexer.core.partition.postings.PostingListReader.skip_to`.

The postings are the seed's ("Yioop Search Engine Ranking Mechanisms": per term, the
documents' doc_map index, frequency and positions entry, in doc_map order). For every block of
every term list of the postings file (lists in file order, blocks in list
order; blocks as :mod:`indexer.core.partition.postings` cuts them) it keeps:

* ``first`` and ``last``: its first and last doc_map index (the header's, as columns);
* ``max_freq``: the largest frequency of its postings (the term's positions in the entry,
  page and anchor text), the statistic from which the ranking bounds the term's DFR part
  (``B_t (f' + rho_t)/(f' + 1)`` grows with the frequency); statistics, not scores, since the
  weights and the collection statistics of the score change after the partition is written
  (Lucene's competitive impacts are kept for the same reason);
* ``bit`` and ``pos``: the bit offset of its header in the postings payload and of its first
  entry in the positions payload, so that a reader starts decoding at any block;

and per list its byte offset in the postings payload (what the dictionary and last_entries
hold), its number of postings and its first block; only for lists of more than one block
(:meth:`BlockMaxima.long_lists`). Merges into the dictionary copy term
records and never re-encode postings, so the file stays true through them; a re-order rebuilds
the partition, and the file with it.
A partition made before the file has none: the ranking then reads every match
(:mod:`ranking.core.shard.exact`).
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
BLOCK_MAXIMA = "block_maxima"


@dataclass(frozen=True, slots=True)
class ListBlocks:
    """The blocks of one term list: arrays of equal length (see the module docstring),
    ``count`` the postings of each block and ``prev_last`` the last doc_map index of the block
    before (-1 for the first)."""

    first: I64
    last: I64
    max_freq: I64
    bit: I64
    pos: I64
    count: I64

    @property
    def prev_last(self) -> I64:
        out = np.empty_like(self.last)
        if out.size:
            out[0] = -1
            out[1:] = self.last[:-1]
        return out

    def __len__(self) -> int:
        return int(self.first.size)


@dataclass(frozen=True, slots=True)
class BlockMaxima:
    """A partition's block maxima: per list ``list_offset`` (ascending byte offsets),
    ``list_count`` (postings) and ``list_block`` (first block, one more entry at the end);
    per block the columns of :class:`ListBlocks`."""

    list_offset: I64
    list_count: I64
    list_block: I64
    first: I64
    last: I64
    max_freq: I64
    bit: I64
    pos: I64
    block_size: int

    def of_list(self, offset: int) -> ListBlocks | None:
        """The blocks of the list at byte ``offset`` of the postings payload (None: no list
        starts there)."""
        i = int(np.searchsorted(self.list_offset, offset))
        if i >= self.list_offset.size or int(self.list_offset[i]) != offset:
            return None
        b0, b1 = int(self.list_block[i]), int(self.list_block[i + 1])
        n = int(self.list_count[i])
        count = np.full(b1 - b0, self.block_size, dtype=np.int64)
        if b1 > b0:
            count[-1] = n - self.block_size * (b1 - b0 - 1)
        return ListBlocks(self.first[b0:b1], self.last[b0:b1], self.max_freq[b0:b1],
                          self.bit[b0:b1], self.pos[b0:b1], count)

    def long_lists(self) -> BlockMaxima:
        """Only the lists of more than one block: a list of one block is read whole by any
        query of it and its bound is the term's (:mod:`ranking.core.shard.block_max`), so
        it is not worth its bytes (most lists of a partition are that short)."""
        per = np.diff(self.list_block)
        keep = per > 1
        if keep.all():
            return self
        owner = np.repeat(np.arange(per.size), per)
        sel = keep[owner]
        list_block = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
        np.cumsum(per[keep], out=list_block[1:])
        return BlockMaxima(self.list_offset[keep], self.list_count[keep], list_block,
                           self.first[sel], self.last[sel], self.max_freq[sel], self.bit[sel],
                           self.pos[sel], self.block_size)

    def shifted(self, offset: int) -> BlockMaxima:
        """The maxima of a run of lists that starts ``offset`` bytes into the payload (its
        byte and bit offsets were from the run's first byte)."""
        return BlockMaxima(self.list_offset + offset, self.list_count, self.list_block,
                           self.first, self.last, self.max_freq, self.bit + 8 * offset,
                           self.pos, self.block_size)

    @staticmethod
    def concat(parts: list[BlockMaxima], block_size: int) -> BlockMaxima:
        """Runs of lists encoded apart (offsets already absolute), as one."""
        if not parts:
            z = np.zeros(0, dtype=np.int64)
            return BlockMaxima(z, z, np.zeros(1, np.int64), z, z, z, z, z, block_size)
        counts = [p.list_block[-1] for p in parts]
        base = np.cumsum([0, *counts[:-1]])
        list_block = np.concatenate([*(p.list_block[:-1] + b for p, b in zip(parts, base,
                                                                             strict=True)),
                                     [int(sum(counts))]])

        def cat(name: str) -> I64:
            return np.concatenate([getattr(p, name) for p in parts]).astype(np.int64)

        return BlockMaxima(cat("list_offset"), cat("list_count"), list_block.astype(np.int64),
                           cat("first"), cat("last"), cat("max_freq"), cat("bit"), cat("pos"),
                           block_size)

    def encode(self) -> bytes:
        """The file's payload: a compressed numpy ``.npz`` of deltas (small numbers)."""
        out = io.BytesIO()
        np.savez_compressed(
            out, block_size=np.array([self.block_size], np.int64),
            list_offset=np.diff(self.list_offset, prepend=0),
            list_count=self.list_count, list_blocks=np.diff(self.list_block),
            first=self.first, span=self.last - self.first,
            max_freq=self.max_freq, bit=np.diff(self.bit, prepend=0),
            pos=np.diff(self.pos, prepend=0))
        return out.getvalue()

    @staticmethod
    def decode(data: bytes) -> BlockMaxima:
        """Maxima from :meth:`encode`'s bytes; ``ValueError`` when they are not such."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                got = {k: z[k].astype(np.int64) for k in z.files}
            list_block = np.zeros(got["list_blocks"].size + 1, dtype=np.int64)
            np.cumsum(got["list_blocks"], out=list_block[1:])
            out = BlockMaxima(np.cumsum(got["list_offset"]), got["list_count"], list_block,
                              got["first"], got["first"] + got["span"], got["max_freq"],
                              np.cumsum(got["bit"]), np.cumsum(got["pos"]),
                              int(got["block_size"][0]))
        except (OSError, KeyError, IndexError, ValueError, zlib.error) as exc:
            raise ValueError(f"not block maxima: {exc}") from exc
        nb = int(out.list_block[-1])
        if (out.list_count.size != out.list_offset.size or out.block_size < 1
                or any(getattr(out, c).size != nb for c in ("first", "last", "max_freq",
                                                            "bit", "pos"))
                or np.any(np.diff(out.list_offset) <= 0)):
            raise ValueError("block maxima: inconsistent lengths")
        return out


__all__ = ["BLOCK_MAXIMA", "BlockMaxima", "ListBlocks"]
