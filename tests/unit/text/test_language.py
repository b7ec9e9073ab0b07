from __future__ import annotations

import pytest

from indexer.core.text import (
    guess_language,
    guess_text_language,
    language_from_url,
    link_stop_words,
    normalize_tag,
    remove_stop_words,
    stop_words,
    sure_text_language,
)
from indexer.core.text.language import text_scores

SAMPLES = {
    "en": "The system is configured by the administrator and it will be used for all of the users.",
    "de": "Das System wird von dem Administrator eingerichtet und es wird für alle Benutzer verwendet.",
    "fr": "Le système est configuré par l'administrateur et il sera utilisé pour tous les utilisateurs.",
    "es": "El sistema es configurado por el administrador y se utiliza para todos los usuarios de la red.",
    "it": "Il sistema è configurato dall'amministratore e sarà utilizzato per tutti gli utenti della rete.",
    "pt": "O sistema é configurado pelo administrador e será usado para todos os usuários da rede.",
    "nl": "Het systeem wordt door de beheerder ingesteld en het is voor alle gebruikers van het netwerk.",
    "ru": "Система настроена администратором, и она будет использоваться для всех пользователей.",
    "ja": "このシステムは管理者によって設定され、すべてのユーザーのために使用されます。",
    "zh-CN": "这个系统是由管理员配置的，我们可以为所有的用户使用这些设置。",
    "zh-TW": "這個系統是由管理員設定的，我們可以為所有的使用者使用這些設定。",
}


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_text_test_picks_the_language(lang):
    assert guess_text_language(SAMPLES[lang]) == lang


def test_declared_language_wins_unless_english():
    assert guess_language(declared=["fr-FR"], text=SAMPLES["de"]).lang == "fr-FR"
    guess = guess_language(declared=["en"], text=SAMPLES["de"])
    assert (guess.lang, guess.source) == ("de", "text")
    guess = guess_language(declared=["en-US"], text=SAMPLES["en"])
    assert (guess.lang, guess.source) == ("en-US", "declared")


def test_order_declared_charset_url_text():
    assert guess_language(declared=["", None], charset="Shift_JIS", text=SAMPLES["en"]).lang == "ja"
    guess = guess_language(declared=["en"], url="https://example.vn/a", text=SAMPLES["en"])
    assert (guess.lang, guess.source) == ("vi", "url")
    assert guess_language().lang == "en"


def test_url_language_markers():
    assert language_from_url("https://x.de/") == "de"
    assert language_from_url("https://x.org/fr/page") == "fr"
    assert language_from_url("https://x.org/ch01.zh-tw.html") == "zh-TW"
    assert language_from_url("https://x.org/en/page") is None
    assert language_from_url("https://x.com/") is None
    assert language_from_url("http://[bad") is None


def test_normalize_tag():
    assert normalize_tag("EN_us") == "en-US"
    assert normalize_tag("zh-Hant") == "zh-TW"
    assert normalize_tag("zh") == "zh-CN"
    assert normalize_tag("!!") is None


def test_stop_words():
    assert "the" in stop_words("en-GB")
    assert "der" in stop_words("de")
    assert {"click", "here"} <= link_stop_words("fr")
    assert remove_stop_words("Click here for the Python tutorial", "en", link=True) == (
        "python tutorial")
    assert remove_stop_words("Read more about caching", "en", link=True) == "caching"
    assert remove_stop_words("View full article", "en", link=True) == ""


def test_link_filler_words_next_to_a_content_word_are_terms():
    assert remove_stop_words("generic view", "en", link=True) == "generic view"
    assert remove_stop_words("RETURN NEXT and RETURN QUERY", "en", link=True) == (
        "return next return query")
    assert remove_stop_words("the home directory", "en", link=True) == "home directory"
    assert remove_stop_words("Next", "en", link=True) == ""
    assert remove_stop_words("the generic view", "en") == "generic view"


def test_ties_go_to_the_language_that_is_not_english():
    # "a" is a frequent word of English, Portuguese and others; English loses the tie.
    assert guess_text_language("a") != "en"
    assert guess_text_language("") == "en"


# A back-of-book index after its link lists are left out: letters, identifiers, "in".
INDEX_TEXT = ("Index _ | A | B | C | D | E | F | G | H | I | J | K | L | M | N | O | P | Q | R | "
              "S | T | U | V | W | Y _AppCtxGlobals (class in flask.ctx) key (flask.json.tag."
              "JSONTag attribute) query_string (flask.Request attribute) YOURAPPLICATION_SETTINGS")


def test_a_page_with_little_running_text_is_not_given_a_language_on_a_few_words():
    assert guess_language(text=INDEX_TEXT).lang == "en"
    assert guess_language(declared=["en"], text=INDEX_TEXT).lang == "en"
    # a tie between English and another language's words is English's on a page
    assert guess_language(declared=["en"], text="for in at for in at for in at").lang == "en"
    assert sure_text_language("a y a y a y a y") is None  # single letters are no evidence


def test_running_text_in_another_language_still_wins():
    french = " ".join([SAMPLES["fr"]] * 2)
    assert guess_language(declared=["en"], text=french).lang == "fr"
    assert guess_language(text=SAMPLES["es"]).lang == "es"


# English prose, as the untranslated parts of a manual or its commands' help carry it.
ENGLISH_PROSE = ("Use this command to install the package and then configure it for the system. "
                 "The file is read when the service starts, and you can change it at any time "
                 "with the tool that is shipped with the package. ")
FRENCH_PROSE = ("Pour installer le paquet, il faut lancer la commande suivante dans un terminal. "
                "Les fichiers de configuration sont lus par le service au démarrage et vous "
                "pouvez les modifier avec votre éditeur. ")


def test_a_part_translated_page_is_in_its_translation_language():
    """A French chapter whose commands and some paragraphs stayed English: English deletes
    more (the seed's test), but French has most of English's vocabulary, which an English
    page never has: French."""
    page = FRENCH_PROSE + ENGLISH_PROSE * 4 + FRENCH_PROSE
    assert text_scores(page)["en"] > text_scores(page)["fr"]
    assert sure_text_language(page) == "fr"
    assert guess_language(declared=["en"], text=page).lang == "fr"


def test_one_repeated_foreign_word_does_not_make_an_english_page_foreign():
    """A table of SQL keywords whose column repeats Italian's "non", a list of addresses at
    ".com" (Portuguese "com"): many occurrences of one word are one word of evidence."""
    keywords = ENGLISH_PROSE + " ".join(f"KEYWORD{i} non reserved" for i in range(300))
    assert max(text_scores(keywords).items(), key=lambda item: item[1])[0] == "it"
    assert sure_text_language(keywords) == "en"
    authors = ENGLISH_PROSE + " ".join(f"Name{i} name{i} at example com" for i in range(200))
    assert sure_text_language(authors) == "en"
