from __future__ import annotations

import pytest

from indexer.core.text import TextAnalyzer, analyze, snowball_algorithm, term_positions
from indexer.core.text.langtags import SNOWBALL


def test_english_stemming():
    assert analyze("jumping foxes jumped", "en") == ["jump", "fox", "jump"]


def test_italian_does_not_use_the_english_stemmer():
    assert analyze("jumping", "it") == ["jumping"]


def test_german_and_french_stemming():
    assert analyze("Häuser", "de") == [TextAnalyzer().stem("häuser", "de")]
    assert analyze("continuellement", "fr") != ["continuellement"]


@pytest.mark.parametrize("lang", sorted(SNOWBALL))
def test_every_snowball_language_has_a_stemmer(lang):
    assert snowball_algorithm(lang) is not None
    assert isinstance(analyze("texts words", lang), list)


def test_languages_without_stemmer_keep_tokens():
    assert analyze("東京 tokyo", "ja") == ["東京", "tokyo"]


def test_query_and_document_share_one_path():
    analyzer = TextAnalyzer()
    doc = analyzer.terms("Running the U.S.A. servers at https://x.org/", "en")
    assert analyzer.query_terms("running U.S.A. servers https://x.org/", "en") == [
        t for t in doc if t not in ("the", "at")]


def test_canonical_tokens_and_numbers_are_not_stemmed():
    assert analyze("U.S.A. 3.11 running", "en") == ["_usa", "3.11", "run"]


def test_positions_across_pieces():
    postings, ends = TextAnalyzer().positions(["The title", "Body text title"], "en")
    assert ends == [2, 5]
    assert postings["titl"] == (1, 4)
    assert term_positions(["a", "b", "a"], 10) == {"a": [10, 12], "b": [11]}
