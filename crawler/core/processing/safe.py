"""A small safe-search classifier (as Yioop's safe-search test works).

Layer: ``crawler.core``. Score = (distinct unsafe terms present) x (total occurrences of unsafe
terms) / (text length in characters + 1); a page is safe when the score is under the threshold
(0.012 by default). A URL whose host or path contains an adult keyword is unsafe outright.
The word list is multilingual and deliberately short: explicit terms only, no words that are
common in ordinary text.
"""

from __future__ import annotations

import re

from indexer.core.text.tokenize import simple_words

UNSAFE_TERMS = frozenset(
    """porn porno pornography pornographic xxx nsfw hentai camgirl camgirls
    milf blowjob blowjobs handjob gangbang bukkake cumshot cumshots creampie dildo dildos
    fetish bdsm bondage orgy orgies nude nudes naked nudity topless erotic erotica stripper
    strippers escort escorts hooker hookers sexcam sexy pussy cock cocks tits boobs anal
    masturbation masturbate orgasm horny slut sluts whore whores
    pornografía pornografia desnuda desnudo desnudas putas puta pornographie salope
    nackt nackte fick ficken geil hure porr порно секс эротика 色情 成人 エロ アダルト""".split()
)
_URL_KEYWORDS = re.compile(
    r"porn|xxx|hentai|nsfw|sexcam|camgirl|milf|bukkake|gangbang|escort|erotic|nude",
    re.IGNORECASE,
)
SAFE_THRESHOLD = 0.012


def unsafe_score(text: str) -> float:
    """The notes' score of a text (0 for ordinary text)."""
    if not text:
        return 0.0
    found: dict[str, int] = {}
    for word in simple_words(text):
        if word in UNSAFE_TERMS:
            found[word] = found.get(word, 0) + 1
    if not found:
        # Scripts without spaces: substring counts.
        for term in ("色情", "成人", "エロ", "アダルト"):
            count = text.count(term)
            if count:
                found[term] = count
    if not found:
        return 0.0
    return len(found) * sum(found.values()) / (len(text) + 1)


def is_safe(url: str, text: str, threshold: float = SAFE_THRESHOLD) -> bool:
    """True when neither the URL nor the text looks like adult content."""
    if _URL_KEYWORDS.search(url):
        return False
    return unsafe_score(text) < threshold
