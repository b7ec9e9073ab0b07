"""Language tags: normalisation, the Snowball stemmer of each language, country domains.

Layer: ``indexer.core.text`` (pure data and small functions). Tags are BCP 47 style:
``xx`` or ``xx-YY`` (language lower case, region upper case). Chinese is always given a region,
``zh-CN`` (simplified) or ``zh-TW`` (traditional), because the two scripts index differently.
"""

from __future__ import annotations

import re

# ISO 639-1 code -> name of the Snowball algorithm in PyStemmer. Every Snowball language that
# has a two-letter code is here.
SNOWBALL: dict[str, str] = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian",
    "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "no": "norwegian", "nb": "norwegian", "nn": "norwegian", "fa": "persian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish",
    "yi": "yiddish", "uk": "russian",
}

# Country-code top-level domain -> language, for the URL test. Only domains whose sites are
# overwhelmingly in one language; English-speaking countries are left out on purpose (the seed
# treats "en" as the uninformative default).
COUNTRY_DOMAINS: dict[str, str] = {
    "de": "de", "at": "de", "fr": "fr", "es": "es", "mx": "es", "ar": "es", "cl": "es",
    "co": "es", "pe": "es", "ve": "es", "it": "it", "pt": "pt", "br": "pt", "nl": "nl",
    "se": "sv", "dk": "da", "no": "no", "fi": "fi", "pl": "pl", "cz": "cs", "sk": "sk",
    "ru": "ru", "ua": "uk", "by": "ru", "tr": "tr", "hu": "hu", "ro": "ro", "gr": "el",
    "jp": "ja", "cn": "zh-CN", "tw": "zh-TW", "hk": "zh-TW", "kr": "ko", "th": "th",
    "vn": "vi", "id": "id", "ir": "fa", "il": "he", "sa": "ar", "eg": "ar", "ae": "ar",
    "in": "hi", "bg": "bg", "hr": "hr", "rs": "sr", "si": "sl", "lt": "lt", "lv": "lv",
    "ee": "et", "is": "is",
}

# Charsets that imply a language (used when a page declares nothing better).
CHARSET_LANGUAGES: dict[str, str] = {
    "gb2312": "zh-CN", "gbk": "zh-CN", "gb18030": "zh-CN", "hz-gb-2312": "zh-CN",
    "big5": "zh-TW", "big5-hkscs": "zh-TW", "shift_jis": "ja", "sjis": "ja", "euc-jp": "ja",
    "iso-2022-jp": "ja", "cp932": "ja", "euc-kr": "ko", "ks_c_5601-1987": "ko",
    "koi8-r": "ru", "koi8-u": "uk", "windows-1251": "ru", "iso-8859-5": "ru",
    "iso-8859-7": "el", "windows-1253": "el", "windows-1256": "ar", "iso-8859-6": "ar",
    "iso-8859-8": "he", "windows-1255": "he", "tis-620": "th", "windows-874": "th",
    "windows-1258": "vi",
}

_TAG = re.compile(r"^([a-zA-Z]{2,3})(?:[-_]([a-zA-Z0-9]{2,8}))?(?:[-_].*)?$")
_TRADITIONAL = {"tw", "hk", "mo", "hant"}


def normalize_tag(tag: str | None) -> str | None:
    """``'EN_us'`` -> ``'en-US'``; ``'zh-Hant'`` -> ``'zh-TW'``; ``'zh'`` -> ``'zh-CN'``.

    Returns ``None`` for an empty or unparsable tag (never raises: tags come from pages).
    """
    if not tag:
        return None
    match = _TAG.match(tag.strip())
    if match is None:
        return None
    lang = match.group(1).lower()
    region = (match.group(2) or "").lower()
    if lang in ("zh", "zho", "chi"):
        return "zh-TW" if region in _TRADITIONAL else "zh-CN"
    if lang == "iw":
        lang = "he"
    if lang == "in":
        lang = "id"
    if region and len(region) == 2 and region.isalpha():
        return f"{lang}-{region.upper()}"
    return lang


def major(tag: str) -> str:
    """The language part of a tag: ``'en-US'`` -> ``'en'``."""
    return tag.split("-", 1)[0]


def snowball_algorithm(tag: str | None) -> str | None:
    """The PyStemmer algorithm name for a language tag, or ``None`` if Snowball has none."""
    if not tag:
        return None
    return SNOWBALL.get(major(tag).lower())
