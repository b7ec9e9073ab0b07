"""Stop words per language, and the extra words that make link text useless.

Layer: ``indexer.core.text``. Stop words are the frequent function words of
:mod:`.wordlists`. They are *not* removed from indexed text (phrase queries need them); they
are removed from link text (the seed: link text "less useless stop-words such as 'click' and
'here'") and may be used by the query side to drop words from long queries.
"""

from __future__ import annotations

from functools import cache

from .langtags import major
from .tokenize import simple_words
from .wordlists import SPACED, UNSPACED, frequent_words

# Words that say nothing about a link's target, in the languages where they are common.
LINK_STOP_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "click here more read link links this page go back next previous prev top home "
        "continue reading see details learn view full article permalink".split()
    ),
    "de": frozenset("hier klicken mehr weiter lesen zurück nächste vorherige seite".split()),
    "fr": frozenset("cliquez ici plus lire suite retour suivant précédent page".split()),
    "es": frozenset("haga clic aquí más leer siguiente anterior volver página".split()),
    "it": frozenset("clicca qui più leggi avanti indietro successivo precedente pagina".split()),
    "pt": frozenset("clique aqui mais leia próximo anterior voltar página".split()),
}


def _key(lang: str | None) -> str:
    if not lang:
        return "en"
    if lang in UNSPACED:
        return lang
    if major(lang) == "zh":
        return "zh-TW" if lang.endswith("TW") else "zh-CN"
    return major(lang)


@cache
def stop_words(lang: str | None) -> frozenset[str]:
    """The stop words of a language tag (``en`` when unknown); an immutable, cached set."""
    key = _key(lang)
    words = frequent_words(key) if (key in SPACED or key in UNSPACED) else ()
    return frozenset(words)


@cache
def link_stop_words(lang: str | None) -> frozenset[str]:
    """Stop words plus link filler words (``click``, ``here``...), English ones always."""
    key = _key(lang)
    return stop_words(lang) | LINK_STOP_WORDS["en"] | LINK_STOP_WORDS.get(key, frozenset())


def remove_stop_words(text: str, lang: str | None, *, link: bool = False) -> str:
    """``text`` with the stop words of ``lang`` removed, words re-joined with single spaces.
    Spaced scripts only; other text is returned with spaces normalised.

    With ``link`` (anchor text), link filler words (``click``, ``here``, ``view``, ``next``...)
    go too, unless a word next to one is a content word (neither a stop word nor filler): they
    are filler in "click here" or "view full article", but terms in "generic view", "RETURN
    NEXT" or "home directory", which a reader looks a page up by."""
    words = simple_words(text)
    stop = stop_words(lang)
    if not link:
        return " ".join(w for w in words if w not in stop)
    filler = link_stop_words(lang)
    content = [w not in filler for w in words]  # filler includes the stop words
    last = len(words) - 1
    return " ".join(w for i, w in enumerate(words) if content[i] or (
        w not in stop and ((i > 0 and content[i - 1]) or (i < last and content[i + 1]))))
