"""The url facts every app shares: a url's host, a host's company level domain, url hashes,
and the queue server that owns a url. Each fact has its home here and nowhere else.

Layer: ``indexer.core`` (pure Python + numpy), below all their users: the crawler (page
processing, the fetcher's crawl-delay lanes, the scheduler's host budgets), link analysis (the
web graph's node and host hashes) and search (url bonuses, the per-url score file's lookups).
See ``docs/architecture.md`` ("indexer/").

* :func:`url_host`: the host name as the url spells it (``urlsplit(url).hostname``: lower-case,
  without userinfo, port or IPv6 brackets, a trailing dot KEPT; '' when it has none; a malformed
  url raises ``ValueError`` as ``urlsplit`` does). The host the ownership rule hashes, the site
  rules match and search's url bonuses read;
* :func:`host_of`: the same host without its trailing dot, '' for a malformed url (never
  raises): the host of politeness lanes, link analysis's host hashes and archive keys;
* :func:`company_level_domain`: the seed's CLD (seed document 000, "Queue Servers and their
  Effect on Search Ranking"): ``something.2chars.2chars`` for hosts of that shape (or longer),
  else ``2ndlevel.tld``; an IP address is its own CLD;
* :func:`registered_domain`: the domain a host was registered under, by the Public Suffix List
  (``www.abc.com.au`` -> ``abc.com.au``, ``docs.user.github.io`` -> ``user.github.io``): who
  controls a host, for link analysis's same-domain limits, where the seed's CLD would make
  every ``*.com.au`` site one owner;
* :func:`url_hash`, :func:`hashes_of`, :func:`as_hash_array`: the url hash, the first 8 bytes
  of a doc_id (:func:`indexer.core.ids.hash8` of the url) read as a big-endian ``uint64``;
  :func:`md5_halves` and :func:`hashes_from_halves` are the same hash in two steps, for the
  scheduler's Bloom filter, which double-hashes with both md5 halves and keys its tables by
  the url hash from one md5 per url;
* :func:`server_of_host`, :func:`server_of_url`: the ownership rule of a crawl of ``n`` queue
  servers: a url belongs to server ``first 4 bytes of hash8(url_host(url)), big-endian, mod n``,
  so every url of a host, and all of that host's politeness state, lives on one queue server.
  Stored crawls depend on it: a change re-assigns hosts between servers.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt
from publicsuffixlist import PublicSuffixList

from .ids import hash8

U64 = npt.NDArray[np.uint64]


# scheme://netloc of a url whose netloc urlsplit keeps as it is: printable ASCII without
# userinfo, port or brackets (otherwise urlsplit reads the url itself: it strips white space
# and control characters, and checks a non-ASCII netloc's NFKC form)
_PLAIN_NETLOC = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://([!-~]*?)(?=[/?#]|\Z)")
_NOT_PLAIN = re.compile(r"[@:\[\]%]")  # % : urlsplit keeps a zone id's case


def url_host(url: str) -> str:
    """The host name as ``url`` spells it: lower-case, no userinfo, port or brackets, a trailing
    dot kept ('' when it has none; ``ValueError`` for a url ``urlsplit`` refuses).

    Exactly ``urlsplit(url).hostname or ""``; the common url (``scheme://host/...``, a host of
    plain characters) is read by one regular expression match instead of a whole urlsplit
    (a third of the time link analysis spends making its web graph's host hashes)."""
    plain = _PLAIN_NETLOC.match(url)
    if plain is not None and _NOT_PLAIN.search(plain.group(1)) is None:
        return plain.group(1).lower()
    return urlsplit(url).hostname or ""


def host_of(url: str) -> str:
    """:func:`url_host` without a trailing dot ('' when it has none or cannot be parsed)."""
    try:
        return url_host(url).rstrip(".")
    except ValueError:
        return ""


def server_of_host(host: str, num_servers: int) -> int:
    """The queue server (0 .. num_servers - 1) that owns ``host`` (case ignored)."""
    if num_servers < 1:
        raise ValueError("there must be at least one queue server")
    return int.from_bytes(hash8(host.lower())[:4], "big") % num_servers


def server_of_url(url: str, num_servers: int) -> int:
    """The queue server that owns ``url``: the owner of its :func:`url_host` (trailing dot
    kept); a url without a host is owned by the owner of ''."""
    return server_of_host(url_host(url), num_servers)


def is_ip_address(host: str) -> bool:
    """True for an IPv4 or IPv6 address (without brackets or port)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=1 << 16)
def company_level_domain(host: str) -> str:
    """The seed's CLD of a host name (case, a trailing dot and a port ignored; an IP address,
    bracketed IPv6 included, is its own CLD): ``www.yahoo.co.uk`` -> ``yahoo.co.uk``,
    ``www.yahoo.com`` -> ``yahoo.com``, ``www.abc.com.au`` -> ``com.au`` (only
    ``2chars.2chars`` keeps three labels). Remembered for the last 65,536 hosts asked (the
    scheduler asks once per discovered url, and a crawl's urls share few hosts)."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("["):
        return host
    if ":" in host:
        if host.count(":") > 1 and is_ip_address(host):
            return host  # an IPv6 address without brackets (a url's hostname)
        head, _, port = host.rpartition(":")
        if port.isdigit():
            host = head
    if is_ip_address(host):
        return host
    labels = [label for label in host.split(".") if label]
    if len(labels) >= 3 and len(labels[-1]) == 2 and len(labels[-2]) == 2:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


_SUFFIXES = PublicSuffixList()  # the list shipped in the package: nothing is downloaded


@functools.lru_cache(maxsize=1 << 16)
def registered_domain(host: str) -> str:
    """The registrable domain of a host name by the Public Suffix List, private suffixes
    included (``a.b.user.github.io`` -> ``user.github.io``); case and a trailing dot ignored.
    A host that is itself a public suffix or has a single label (``localhost``), and an IP
    address, is its own domain; '' stays ''."""
    host = host.strip().lower().rstrip(".")
    if not host or is_ip_address(host.strip("[]")):
        return host
    return _SUFFIXES.privatesuffix(host) or host


def url_hash(url: str) -> int:
    """A url's 8-byte hash as an unsigned integer (the doc_id's first 8 bytes, big-endian)."""
    return int.from_bytes(hash8(url), "big")


def hashes_of(urls: Sequence[str]) -> U64:
    """``url_hash`` of each url, as a ``uint64`` array."""
    return hashes_from_halves(md5_halves(urls))


def md5_halves(urls: Sequence[str]) -> U64:
    """``(len(urls), 2)``: the two 8-byte halves of each url's md5 (UTF-8, surrogates passed),
    each read big-endian, as native ``uint64``."""
    md5 = hashlib.md5
    raw = b"".join([md5(u.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()
                    for u in urls])
    return np.frombuffer(raw, dtype=">u8").astype(np.uint64).reshape(-1, 2)


def hashes_from_halves(halves: U64) -> U64:
    """The url hash of each row of :func:`md5_halves` (the halves xored: :func:`hash8`)."""
    return np.bitwise_xor(halves[:, 0], halves[:, 1])


def as_hash_array(hashes: Any) -> U64:
    """Url hashes given as uint64 integers, as 8-byte strings, or as an (k, 8) uint8 array."""
    arr = np.asarray(hashes)
    if arr.dtype.kind == "S":
        if arr.dtype.itemsize != 8:
            raise ValueError("byte url hashes must be 8 bytes long")
        return np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype=">u8").astype(np.uint64)
    if arr.dtype == np.uint8 and arr.ndim == 2:
        if arr.shape[1] < 8:
            raise ValueError("uint8 url hashes need 8 columns")
        rows = np.ascontiguousarray(arr[:, :8])
        return rows.view(">u8").reshape(-1).astype(np.uint64)
    if arr.dtype.kind in "iu":
        return arr.astype(np.uint64, copy=False).reshape(-1)
    if arr.dtype == object:
        return np.array([int.from_bytes(h, "big") if isinstance(h, bytes) else int(h)
                         for h in arr.reshape(-1)], dtype=np.uint64)
    raise ValueError(f"cannot read url hashes of dtype {arr.dtype}")
