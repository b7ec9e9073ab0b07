"""The analyzer's chunk memo gives exactly the terms of tokenising and stemming the whole text."""

from __future__ import annotations

import Stemmer

from indexer.core.text import TextAnalyzer
from indexer.core.text import analyzer as analyzer_module
from indexer.core.text.langtags import snowball_algorithm
from indexer.core.text.tokenize import WORD, tokenize_ascii_chunks, tokenize_with_kinds

TEXTS = [
    "The quick brown foxes were running, (jumping) over 3.11 lazy dogs.",
    "See https://example.com/a?b=c&d=e, mail me@example.org or www.example.net.",
    "AT&T and rock'n'roll; U.S.A. policies, os.path.join(a, b) and x=1",
    "Ｆｕｌｌ-width ﬁ ligatures café naïve Straße İstanbul ΣΊΣΥΦΟΣ",
    "中文分词测试 日本語のテキスト ภาษาไทย mixed with English words 2024",
    "numbers 1,000,000 and 42 and 3.14.15; a.b.c. e.g. i.e.",
    "tab\tseparated\nlines\u00a0nbsp\u2003em-space www. www.) end.",
    "",
    "   ",
    "¨ spacing diaeresis and ½ fractions ²",
]


def reference_terms(text: str, lang: str | None) -> list[str]:
    """The terms as the analyzer made them before the memo: one pass over the whole text."""
    tokens, kinds = tokenize_with_kinds(text)
    algorithm = snowball_algorithm(lang)
    if algorithm is None:
        return tokens
    stemmer = Stemmer.Stemmer(algorithm)
    return [stemmer.stemWord(t) if k == WORD and not t.isdigit() else t
            for t, k in zip(tokens, kinds, strict=True)]


def test_terms_match_whole_text_tokenising() -> None:
    analyzer = TextAnalyzer()
    for lang in ("en", "de", "fr", "zh-CN", "ja", None, "xx"):
        for text in TEXTS:
            assert analyzer.terms(text, lang) == reference_terms(text, lang), (text, lang)
            # a second time, from the memo
            assert analyzer.terms(text, lang) == reference_terms(text, lang), (text, lang)


def test_positions_match_terms_of_each_piece() -> None:
    analyzer = TextAnalyzer()
    postings, ends = analyzer.positions(iter(TEXTS), "en", start=5)
    expected: dict[str, list[int]] = {}
    pos = 5
    expected_ends = []
    for text in TEXTS:
        for term in reference_terms(text, "en"):
            expected.setdefault(term, []).append(pos)
            pos += 1
        expected_ends.append(pos)
    assert postings == {term: tuple(at) for term, at in expected.items()}
    assert list(postings) == list(expected)  # first occurrence order
    assert ends == expected_ends
    assert analyzer.positions(["", " "], "en") == ({}, [0, 0])


def test_full_memo_is_emptied(monkeypatch) -> None:
    monkeypatch.setattr(analyzer_module, "MEMO_MAX", 3)
    analyzer = TextAnalyzer()
    for _ in range(3):
        for text in TEXTS:
            assert analyzer.terms(text, "en") == reference_terms(text, "en")
    assert len(analyzer._memo("en")) <= 3 + max(len(t.split()) for t in TEXTS)


def test_no_stemming() -> None:
    analyzer = TextAnalyzer(stem=False)
    for text in TEXTS:
        assert analyzer.terms(text, "en") == tokenize_with_kinds(text)[0]


def test_ascii_chunks_cut_together_as_one_by_one() -> None:
    """tokenize_ascii_chunks (one regular expression pass, without the URL or e-mail branch
    when no chunk can hold one) gives each chunk's tokenize_with_kinds."""
    chunks = [chunk.lower() for text in TEXTS if text.isascii() for chunk in text.split()]
    chunks += ["www.a.b", "x@y.org", "ftp://h/p", "a.b.c.", "1,2", "rock'n'roll", "(u.s.a.)"]
    for group in (chunks, [c for c in chunks if "@" not in c and "/" not in c], chunks[:1], []):
        assert tokenize_ascii_chunks(group) == [tokenize_with_kinds(c) for c in group]
