"""64-bit SimHash of a page's text: the fingerprint near-duplicate detection compares.

Layer: ``indexer.core`` (pure Python + numpy). The fetcher computes it at processing time over
the page's text after its furniture is left out (``crawler.core.processing``: navigation,
footers and sidebars are not in ``ProcessedPage.body``) and stores it with the document
summary (``"simhash"``, 16 hex digits); the queue server compares it with the pages it has seen
(``crawler.core.queue_server.near_duplicates``); the link analysis clusters a crawl's pages by
it (:mod:`indexer.core.signals.near_clusters`).

The method (Charikar 2002, as Manku, Jain and Das Sarma 2007 used it at web scale): the text is
lower-cased and cut into words (runs of word characters); each run of :data:`SHINGLE` words is
one feature, hashed to 64 bits; every bit of the fingerprint is set when more features have
it set than not. Features are counted once each (a set, not a bag): a page that repeats a
paragraph is not a different page. Equal texts give equal fingerprints; a small edit changes
only the features it touches, so the fingerprints of two versions of a page differ in few bits.

Word hashes are CRC-32 of the UTF-8 word (stable across processes, unlike ``hash()``); a
shingle's hash mixes its words' hashes by position with the SplitMix64 finaliser, all in numpy.
Texts with fewer than :data:`MIN_WORDS` words have no fingerprint (0, "none"): too little text
to call two pages near-duplicates.
"""

from __future__ import annotations

import re
import zlib

import numpy as np
import numpy.typing as npt

SHINGLE = 3           # words per feature
MIN_WORDS = 12        # fewer words: no fingerprint
NO_SIMHASH = 0        # the fingerprint of a text too short to have one
_WORD = re.compile(r"\w+")
_MULTIPLIERS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                         0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD], dtype=np.uint64)
_BIT_VALUES = np.uint64(1) << np.arange(64, dtype=np.uint64)


def words(text: str) -> list[str]:
    """The words features are made of: lower-cased runs of word characters."""
    return _WORD.findall(text.lower())


def _mix(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64's finaliser: every input bit reaches every output bit."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def shingle_hashes(tokens: list[str], size: int = SHINGLE) -> npt.NDArray[np.uint64]:
    """The distinct 64-bit hashes of the runs of ``size`` consecutive ``tokens`` (the one run
    of all of them when there are fewer), sorted."""
    if not tokens:
        return np.zeros(0, dtype=np.uint64)
    codes = {w: zlib.crc32(w.encode("utf-8", "surrogatepass")) for w in set(tokens)}
    ids = np.fromiter((codes[w] for w in tokens), dtype=np.uint64, count=len(tokens))
    size = max(1, min(size, ids.size, _MULTIPLIERS.size))
    count = ids.size - size + 1
    with np.errstate(over="ignore"):
        acc = np.full(count, np.uint64(size), dtype=np.uint64)
        for offset in range(size):
            acc = _mix(acc ^ (ids[offset:offset + count] * _MULTIPLIERS[offset]))
    return np.unique(acc)


def simhash_of_features(features: npt.NDArray[np.uint64]) -> int:
    """The SimHash of a set of 64-bit feature hashes (0 for none)."""
    if features.size == 0:
        return NO_SIMHASH
    bits = np.unpackbits(features.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1,
                         bitorder="little")
    ones = bits.sum(axis=0, dtype=np.int64)
    set_bits = ones * 2 > features.size
    return int(_BIT_VALUES[set_bits].sum(dtype=np.uint64)) if set_bits.any() else 0


def simhash(text: str) -> int:
    """The 64-bit SimHash of ``text`` (see the module), :data:`NO_SIMHASH` for a text of
    fewer than :data:`MIN_WORDS` words."""
    tokens = words(text)
    if len(tokens) < MIN_WORDS:
        return NO_SIMHASH
    value = simhash_of_features(shingle_hashes(tokens))
    return value if value != NO_SIMHASH else 1  # 0 means "none": a real all-zero is rare


def title_key(title: str) -> str:
    """What two near-duplicates' titles must share: the title's first word, lower-cased ("" for
    no title). Documentation generators give every page one template, so pages about
    different items (two iterator types, two methods of a class) can differ in a few words
    of thousands; their titles name the item first ("TakeWhile in std::iter", "SkipWhile in
    std::iter"), while copies of one page (a re-export, a second version, a mirror) keep it
    ("Vec in std::vec", "Vec in alloc::vec"). Tuned on the labelled pairs of
    ``bench/data/near_duplicates.tsv`` (``bench/near_duplicates_bench.py``)."""
    first = title.split(maxsplit=1)
    return first[0].lower() if first else ""


def title_tag(title: str) -> int:
    """:func:`title_key` as a 32-bit number (what a visit carries)."""
    return zlib.crc32(title_key(title).encode("utf-8", "surrogatepass"))


def hamming(a: int, b: int) -> int:
    """Bits in which two fingerprints differ."""
    return (a ^ b).bit_count()


def to_hex(value: int) -> str:
    """The stored form: 16 lower-case hex digits."""
    return f"{value:016x}"


def from_hex(text: object) -> int:
    """A stored fingerprint back (:data:`NO_SIMHASH` for a missing or malformed one)."""
    if not isinstance(text, str) or len(text) != 16:
        return NO_SIMHASH
    try:
        return int(text, 16)
    except ValueError:
        return NO_SIMHASH
