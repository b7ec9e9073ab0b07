"""Small builders of IndexDocuments for the index tests."""

from __future__ import annotations

import random

import numpy as np

from indexer.core.documents.doc_index import DocBatch
from indexer.core.documents.document import IndexDocument
from indexer.core.ids import DocType, hash7, hash8
from indexer.core.partition.build import ActiveDocs, Vocabulary

WORDS = [f"w{i}" for i in range(3000)]


def make_doc(i: int, *, url: str | None = None, doc_type: DocType = DocType.PAGE,
             text: str | None = None, words: int | None = None,
             cached: bool = True) -> IndexDocument:
    """A deterministic document numbered ``i`` with Zipf-like words."""
    rnd = random.Random(i)
    n = words if words is not None else rnd.randint(3, 120)
    tokens = [WORDS[int(rnd.paretovariate(1.1)) % len(WORDS)] for _ in range(n)]
    terms: dict[str, list[int]] = {}
    for pos, tok in enumerate(tokens):
        terms.setdefault(tok, []).append(pos)
    url = url or f"https://h{i % 5}.example/p{i}"
    host = url.split("/")[2]
    body = text if text is not None else " ".join(tokens)
    return IndexDocument(
        url=url, host=host, doc_type=doc_type, text_hash=hash7(body),
        summary={"title": f"title {i}", "url": url, "description": body[:200]},
        terms=terms, length=len(tokens), meta_words=(f"site:{host}",),
        region_weights=((min(2, max(len(tokens) - 1, 0)), 2.0), (max(len(tokens) - 1, 0), 1.0))
        if tokens else (),
        classifier_scores=(0.25,),
        cached_page=(f"<html><body>{body}</body></html>".encode() if cached and i % 2 == 0
                     else None))


def first_doc_ids(reader, term: str, n: int) -> list[bytes]:
    """The url hashes (first 8 bytes of the doc ids) of the first ``n`` entries of ``term``'s
    posting list, in index order: what the seed's early termination would read."""
    out: list[bytes] = []
    cursor = reader.postings(term)
    while len(out) < n and (block := cursor.next_block()) is not None:
        dm = reader.doc_map(block.partition)
        out.extend(dm.doc_id(int(i))[:8] for i in block.doc_index[:n - len(out)])
    return out


def synthetic_partition(ndocs: int, seed: int = 20):
    """An active partition of ``ndocs`` distinct pages (150 to 750 words, words drawn by a
    Zipf-Mandelbrot law of exponent 1.5, as bench/synthetic_corpus.py draws them), made with
    array operations and kept as the writer keeps it: ``(ActiveDocs, Vocabulary)``."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(150, 750, ndocs)
    total = int(lengths.sum())
    doc_of = np.repeat(np.arange(ndocs), lengths)
    position = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    word = (rng.pareto(0.5, total) * 10).astype(np.int64)  # p(r) ~ (r + 10) ** -1.5
    order = np.lexsort((position, word, doc_of))  # by document, then term, then position
    doc_of, word, position = doc_of[order], word[order], position[order]
    first = np.ones(total, dtype=bool)
    first[1:] = (doc_of[1:] != doc_of[:-1]) | (word[1:] != word[:-1])
    starts = np.flatnonzero(first)
    batch = DocBatch(
        [hash8(f"u{i}") + bytes([DocType.PAGE]) + hash7(f"t{i}") + hash8("h")
         for i in range(ndocs)],
        lengths.tolist(), [()] * ndocs, [()] * ndocs, [f"w{w}" for w in word[starts].tolist()],
        np.bincount(doc_of[starts], minlength=ndocs), np.diff(np.append(starts, total)),
        position, [], np.zeros(ndocs, dtype=np.int64))
    docs, vocab = ActiveDocs(), Vocabulary()
    docs.add(batch, vocab, np.zeros((ndocs, 6), dtype=np.int64))
    return docs, vocab
