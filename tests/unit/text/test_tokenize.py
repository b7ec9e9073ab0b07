from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.text import char_ngrams, spell_url, tokenize


def test_words_are_lower_cased_and_split_on_punctuation():
    assert tokenize("Hello, World! It's") == ["hello", "world", "it", "s"]


def test_acronyms_become_one_underscored_token():
    assert tokenize("the U.S.A. and e.g. this") == ["the", "_usa", "and", "_eg", "this"]


def test_urls_and_emails_are_spelled_as_one_token():
    assert tokenize("see https://docs.python.org/3/x.html?a=1&b=2.") == [
        "see", "https_c__s__s_docs_d_python_d_org_s_3_s_x_d_html_q_a_e_1_and_b_e_2"]
    assert tokenize("mail bob@example.com now") == ["mail", "bob_at_example_d_com", "now"]
    assert spell_url("www.a.org") == "www_d_a_d_org"


def test_ampersand_and_n_joins():
    assert tokenize("AT&T R&D rock'n'roll") == ["at_and_t", "r_and_d", "rock_and_roll"]


def test_decimal_numbers_stay_whole():
    assert tokenize("Python 3.11 costs 1,000") == ["python", "3.11", "costs", "1,000"]


def test_cjk_runs_become_bigrams_and_thai_trigrams():
    assert tokenize("東京大学") == ["東京", "京大", "大学"]
    assert tokenize("Python の本") == ["python", "の本"]
    assert tokenize("字") == ["字"]
    assert tokenize("สวัสดี")[:2] == ["สวั", "วัส"]
    assert char_ngrams("abcd", 2) == ["ab", "bc", "cd"]


def test_nfkc_folds_full_width_letters():
    assert tokenize("ＰＹＴＨＯＮ") == ["python"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_tokenize_never_raises_and_yields_nonempty_tokens(text):
    assert all(token for token in tokenize(text))
