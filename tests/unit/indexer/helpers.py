"""Small builders of IndexDocuments for the index tests."""

from __future__ import annotations

import random

from indexer.core.document import IndexDocument
from indexer.core.ids import DocType, hash7

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
