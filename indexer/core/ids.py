"""Document and term identifiers, as the seed document 000 gives them.

Layer: ``indexer.core`` (pure Python + numpy). Used by the fetcher side (``crawler.core``) to name
what it ships, by the bundle writer to key documents, and by the query side to look terms up.

* 8-byte hashes are md5 with its two 8-byte halves xored; 7-byte hashes are the first 7 bytes
  of that.
* A doc_id is 24 bytes: 8-byte url hash, 1-byte document type, 7-byte text hash, 8-byte host hash.
* A term_id is the first 7 characters of the term (padded with ``_``), then ``_``, then the
  8-byte hash of the term: 16 bytes when the 7 characters are ASCII.
"""

from __future__ import annotations

import hashlib
from enum import IntEnum

import numpy as np

DOC_ID_LEN = 24
URL_HASH = slice(0, 8)
DOC_TYPE = 8
TEXT_HASH = slice(9, 16)
HOST_HASH = slice(16, 24)


class DocType(IntEnum):
    """The one-byte document type inside a doc_id."""

    PAGE = 0       # a fetched page's summary
    LINK = 1       # a link's text, filed under the link's target url
    LOCATION = 2   # a redirect or canonical: "url => target"
    SUBDOC = 3     # a sub-document produced by a page processor or plugin


def hash8(data: bytes | str) -> bytes:
    """md5 with its two halves xored: the seed's 8-byte hash."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    digest = hashlib.md5(data, usedforsecurity=False).digest()
    return (int.from_bytes(digest[:8], "big") ^ int.from_bytes(digest[8:], "big")).to_bytes(
        8, "big")


def hash7(data: bytes | str) -> bytes:
    """The first 7 bytes of :func:`hash8`."""
    return hash8(data)[:7]


def make_doc_id(url: str, doc_type: int, text_hash: bytes, host: str) -> bytes:
    """Build a 24-byte doc_id. ``text_hash`` is a 7-byte hash (see :func:`hash7`)."""
    if len(text_hash) != 7:
        raise ValueError(f"text hash must be 7 bytes, got {len(text_hash)}")
    if not 0 <= int(doc_type) <= 255:
        raise ValueError(f"document type out of range: {doc_type}")
    return hash8(url) + bytes([int(doc_type)]) + text_hash + hash8(host)


def term_id(term: str) -> bytes:
    """The seed's term_id: 7 characters of the term padded with '_', '_', 8-byte hash."""
    prefix = (term[:7]).ljust(7, "_")
    return prefix.encode("utf-8", "surrogatepass") + b"_" + hash8(term)


def term_ids(terms: list[str]) -> list[bytes]:
    """:func:`term_id` of each of ``terms``: the md5 digests are taken in one pass and their
    halves xored as one array; the 16-byte ids of terms whose first 7 characters are ASCII
    (nearly all) are laid out as one byte array, the others made one by one."""
    if not terms:
        return []
    md5 = hashlib.md5
    digests = np.frombuffer(b"".join([md5(t.encode("utf-8", "surrogatepass"),
                                          usedforsecurity=False).digest() for t in terms]),
                            dtype=">u8").reshape(-1, 2)
    hashes = (digests[:, 0] ^ digests[:, 1]).astype(">u8")
    n = len(terms)
    prefix = np.array(terms, dtype="U7").view(np.uint32).reshape(n, 7)  # NUL-padded
    prefix = np.where(prefix == 0, ord("_"), prefix)  # terms hold no NUL (doc_index)
    ids = np.empty((n, 16), dtype=np.uint8)
    ids[:, :7] = prefix  # wraps for non-ASCII characters: those ids are replaced below
    ids[:, 7] = ord("_")
    ids[:, 8:] = hashes.view(np.uint8).reshape(n, 8)
    out = ids.view("V16").ravel().tolist()
    raw_hashes = hashes.tobytes()
    for i in np.flatnonzero((prefix > 0x7F).any(axis=1)).tolist():
        out[i] = term_id_prefix(terms[i]) + raw_hashes[8 * i:8 * i + 8]
    return out


def term_id_prefix(term: str) -> bytes:
    """The first 8 bytes of :func:`term_id`: the term's first 7 characters (UTF-8) padded
    with '_', then '_'."""
    return term[:7].ljust(7, "_").encode("utf-8", "surrogatepass") + b"_"
