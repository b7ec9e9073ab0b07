"""Url columns of a partition: the url inputs of the search's url bonuses, one row per doc_map entry.

Layer: ``indexer.core``. Written beside the doc_map when a partition is built
(:func:`indexer.core.partition.build.build_partition`: by the writer, and by a re-order, which
rebuilds the partition in its new order), read by the ranking's url features
(:class:`ranking.core.shard.url_features.UrlFeatures`), which otherwise read every entry's url
from the head of its stored summary on first use (about 50 us per entry: seconds for the
first query of a frequent word at a hundred thousand entries; docs/exact-topk.md, section 9).

Per entry, of its representative's url (the ``url`` its stored summary starts with,
:func:`summary_url`): whether it is a host root, a root whose host is its own company-level
domain, on a wikipedia host, whether its last path segment holds a "." (flags), its number of
slashes, and its host and path *chunks*: the url's lower-cased words before analysis
(:func:`url_parts`), numbered in one vocabulary of the partition. The chunks are stored, not
terms, because terms depend on the query's language (its stemmer): the text analyzer's terms
of a text are those of its white-space separated chunks in order
(:meth:`indexer.core.text.analyzer.TextAnalyzer.terms`), so the reader analyses each distinct
chunk once per language and gets exactly the terms of the whole url.
"""

from __future__ import annotations

import functools
import io
import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from ..urls import company_level_domain, is_ip_address, url_host

_SPLIT = re.compile(r"[^\w]+|_")

ROOT, CLD, WIKI, DOTTED = 1, 2, 4, 8  # bits of UrlColumns.flags


@dataclass(frozen=True, slots=True)
class UrlParts:
    """The language-independent url inputs of the url bonuses of one url: its host, whether
    it is a root (path "/", no query), a root on its own company-level domain (not an IP
    address), its slashes (0 for a root), the chunks of its host (without "www.") and of its
    path, and whether the path's last segment holds a "." (a file extension may end it)."""

    host: str
    is_root: bool
    is_cld: bool
    slashes: int
    host_chunks: tuple[str, ...]
    path_chunks: tuple[str, ...]
    dotted: bool


def url_chunks(text: str) -> tuple[str, ...]:
    """The lower-cased words of a url part, split at every non-word character and "_"."""
    return tuple(w for w in _SPLIT.split(text.lower()) if w)


_NO_PARTS = UrlParts("", False, False, 0, (), (), False)


@functools.lru_cache(maxsize=1 << 16)
def url_parts(url: str) -> UrlParts:
    """:class:`UrlParts` of ``url``; a url that ``urlsplit`` refuses (an unclosed IPv6
    bracket, a host that NFKC turns into a delimiter: an archive record may name any url) has
    none: no host, no url bonus. Never raises. Remembered for the 65,536 latest urls: a
    partition's link documents name the same targets many times (50,000 documents, 19,653
    urls on the default tier), and the writer makes every appended document's parts."""
    try:
        parts = urlsplit(url)
        host = url_host(url)
    except ValueError:
        return _NO_PARTS
    path = parts.path or "/"
    is_root = path == "/" and not parts.query
    bare = host.removeprefix("www.")
    is_cld = (is_root and bool(host) and not is_ip_address(host)
              and bare == company_level_domain(host))
    return UrlParts(host, is_root, is_cld, 0 if is_root else path.count("/"), url_chunks(bare),
                    url_chunks(path), "." in path.rsplit("/", 1)[-1])


def summary_url(summary: bytes, size: int = 2048) -> str:
    """The ``url`` of a stored summary (gzip of its JSON object), read from its head when the
    object starts with it (as the bundle reader's summary heads are), else from the whole
    summary; "" for a summary that does not decode."""
    try:
        text = zlib.decompressobj(31).decompress(summary, 8 * size).decode("utf-8", "ignore")
        if text.startswith('{"url":'):
            url, _ = json.JSONDecoder().raw_decode(text, 7)
            return str(url)
        whole = json.loads(zlib.decompress(summary, 31))
    except (zlib.error, ValueError):
        return ""
    return str(whole.get("url", "")) if isinstance(whole, dict) else ""


Int = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class UrlColumns:
    """One partition's url columns (see the module): ``flags`` and ``slashes`` per entry,
    entry i's host chunks ``host_chunks[host_start[i]:host_start[i + 1]]`` (numbers in
    ``vocab``), its path chunks likewise."""

    flags: npt.NDArray[np.uint8]
    slashes: Int
    host_start: Int
    host_chunks: Int
    path_start: Int
    path_chunks: Int
    vocab: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.flags.size)

    @staticmethod
    def of(urls: Sequence[UrlParts]) -> UrlColumns:
        """The columns of entries with url parts ``urls``, in order."""
        numbers: dict[str, int] = {}
        columns = []
        for which in ("host_chunks", "path_chunks"):
            lists = [getattr(u, which) for u in urls]
            counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
            start = np.zeros(len(lists) + 1, dtype=np.int64)
            np.cumsum(counts, out=start[1:])
            ids = np.fromiter((numbers.setdefault(c, len(numbers)) for x in lists for c in x),
                              dtype=np.int64, count=int(start[-1]))
            columns.append((start, ids))
        flags = np.fromiter(((ROOT if u.is_root else 0) | (CLD if u.is_cld else 0)
                             | (WIKI if "wikipedia" in u.host else 0)
                             | (DOTTED if u.dotted else 0) for u in urls),
                            dtype=np.uint8, count=len(urls))
        slashes = np.fromiter((u.slashes for u in urls), dtype=np.int64, count=len(urls))
        (hs, hc), (ps, pc) = columns
        return UrlColumns(flags, slashes, hs, hc, ps, pc, tuple(numbers))

    def encode(self) -> bytes:
        """The columns as bytes (a compressed numpy ``.npz``; chunk counts per entry; the
        vocabulary UTF-8, chunks separated by a new line, which no chunk holds)."""
        out = io.BytesIO()
        # chunk counts, not starts: small numbers, which compress well
        np.savez_compressed(
            out, flags=self.flags, slashes=self.slashes.astype(np.int32),
            host_count=np.diff(self.host_start).astype(np.int32),
            host_chunks=self.host_chunks.astype(np.int32),
            path_count=np.diff(self.path_start).astype(np.int32),
            path_chunks=self.path_chunks.astype(np.int32),
            vocab=np.frombuffer("\n".join(self.vocab).encode("utf-8"), dtype=np.uint8))
        return out.getvalue()

    @staticmethod
    def decode(data: bytes) -> UrlColumns:
        """Columns from :meth:`encode`'s bytes; ``ValueError`` when they are not such."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                got = {k: z[k] for k in z.files}
            text = got["vocab"].tobytes().decode("utf-8")
            starts = []
            for name in ("host_count", "path_count"):
                count = got[name].astype(np.int64)
                if np.any(count < 0):
                    raise ValueError(f"negative {name}")
                start = np.zeros(count.size + 1, dtype=np.int64)
                np.cumsum(count, out=start[1:])
                starts.append(start)
            cols = UrlColumns(got["flags"].astype(np.uint8), got["slashes"].astype(np.int64),
                              starts[0], got["host_chunks"].astype(np.int64),
                              starts[1], got["path_chunks"].astype(np.int64),
                              tuple(text.split("\n")) if text else ())
        except (OSError, KeyError, ValueError, zlib.error) as exc:
            raise ValueError(f"not url columns: {exc}") from exc
        n = cols.flags.size
        for start, chunks in ((cols.host_start, cols.host_chunks),
                              (cols.path_start, cols.path_chunks)):
            if (start.size != n + 1 or start[0] != 0 or np.any(np.diff(start) < 0)
                    or start[-1] != chunks.size or cols.slashes.size != n
                    or (chunks.size and (chunks.min() < 0 or chunks.max() >= len(cols.vocab)))):
                raise ValueError("url columns: inconsistent lengths")
        return cols


__all__ = ["CLD", "DOTTED", "ROOT", "WIKI", "UrlColumns", "UrlParts", "summary_url",
           "url_chunks", "url_parts"]
