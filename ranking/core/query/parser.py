"""The query language: parse a query string into a :class:`ParsedQuery` of disjuncts.

Layer: ``ranking.core`` (pure Python). Words go through ``indexer.core.text`` — the same
tokenisation and stemming as documents — so a query term is spelled exactly as the index spells
it. Meta words (``site:``, ``lang:`` ...) are ordinary terms of the index and are kept verbatim
(lower-cased).

Syntax (Yioop's query language):

* words are conjunctive; ``|`` separates disjuncts (a union of conjunctions);
* ``"exact phrase"``, with ``*`` inside quotes matching any run of words;
* ``-word`` / ``-"a phrase"`` / ``-site:x`` exclude documents;
* meta words ``prefix:value`` (``site: path: filetype: lang: safe: media: info: link: source:
  date: code:`` and the rest of :data:`META_PREFIXES`). Values are lower-cased, except those
  of the url-valued ones (:data:`URL_META_PREFIXES`: ``info: link: source: location:``), whose
  scheme and host only are lower-cased, as the crawler's canonical urls are: a url's path is
  case-sensitive (``/std/struct.HashMap.html``), and so is ``info:``'s url-hash form.
  ``source:<url>`` finds the link documents of the page at ``<url>`` (every outlink the
  crawler indexed with its anchor text), i.e. the pages it links to;
* ``if:needle!then!else`` conditionals are expanded and ``#n#`` result ranges taken out (with
  a message) first (:mod:`ranking.core.query.conditionals`);
* control words, taken out before parsing: ``i:``/``index:`` (crawl timestamp), ``raw:`` (no
  grouping), ``no:guess``, ``no:network``, ``no:cache``, ``w:``/``weight:`` (score multiplier).

Parsing never fails: bad syntax (an unbalanced quote, an unknown control word, an empty query) is
reported in :attr:`ParsedQuery.messages` and the best-effort reading is searched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from indexer.core.meta_vocabulary import META_PREFIXES, URL_META_PREFIXES
from indexer.core.text import TextAnalyzer, guess_text_language, major
from ranking.core.query.conditionals import expand_conditionals, strip_ranges
from ranking.core.query.numerals import ascii_decimal, ascii_int

CONTROL_PREFIXES = frozenset({"i", "index", "raw", "no", "w", "weight", "m", "mix", "highlight"})
NO_OPTIONS = frozenset({"guess", "network", "cache"})
# A term ending in one of these becomes site:term (guessSemantics)
GUESS_SITE_SUFFIXES = (".com", ".net", ".edu", ".org", ".gov", ".mil", ".ca", ".uk", ".fr",
                       ".ly", ".io", ".de")
# Meta words whose presence stops the automatic lang:/safe: words (``source:`` names one page,
# whose link documents all carry that page's language, whatever the reader's)
SCOPING_PREFIXES = ("site:", "info:", "path:", "ip:", "source:")
LETTER_WORD = {"en": "letter", "fr": "lettre", "de": "buchstabe", "es": "letra", "it": "lettera",
               "pt": "letra"}

_META_RE = re.compile(r"^([a-z][a-z-]*):(\S+)$", re.IGNORECASE)
# one programming identifier: ASCII names joined by ".", "::", "-" or "/" (os.path.join)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|-|/)[A-Za-z0-9_]+)+")


@dataclass(frozen=True, slots=True)
class Phrase:
    """Consecutive terms; ``None`` stands for ``*`` (any run of words, possibly empty)."""

    terms: tuple[str | None, ...]
    surface: str

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(t for t in self.terms if t is not None)


@dataclass(frozen=True, slots=True)
class Conjunct:
    """One disjunct: documents with every term and meta word, every phrase, and none of the
    negated items."""

    terms: tuple[str, ...] = ()          # stemmed word terms (may repeat: counts twice)
    meta: tuple[str, ...] = ()           # meta words as indexed, e.g. "site:example.com"
    phrases: tuple[Phrase, ...] = ()
    negated_terms: tuple[str, ...] = ()  # word terms and meta words to exclude
    negated_phrases: tuple[Phrase, ...] = ()
    auto_meta: tuple[str, ...] = ()      # lang:/safe: words the parser added
    # runs of two or more loose terms (in ``terms``) that stood side by side in the query:
    # a meta word, a quoted phrase, a negated word or a dropped stop word ends a run. The
    # candidates of the seed's common phrases (:mod:`indexer.core.signals.phrases`)
    runs: tuple[tuple[str, ...], ...] = ()

    @property
    def all_terms(self) -> tuple[str, ...]:
        """Every positive word term: loose terms first, then the phrases' words."""
        words = list(self.terms)
        for phrase in self.phrases:
            words.extend(phrase.words)
        return tuple(words)

    @property
    def required(self) -> tuple[str, ...]:
        """Every distinct positive term a document must contain (words and meta words)."""
        return tuple(dict.fromkeys((*self.all_terms, *self.meta, *self.auto_meta)))

    @property
    def is_empty(self) -> bool:
        return not (self.terms or self.meta or self.phrases)


@dataclass(frozen=True, slots=True)
class Controls:
    index: int | None = None
    raw: bool = False
    guess: bool = True
    network: bool = True
    cache: bool = True
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str
    disjuncts: tuple[Conjunct, ...]
    controls: Controls
    lang: str
    rewritten: str                       # the query as searched, after guesses
    messages: tuple[str, ...] = ()
    highlight: tuple[str, ...] = ()      # surface words for snippets and highlighting
    guessed: bool = False                # a semantic guess changed the query

    @property
    def is_empty(self) -> bool:
        return all(d.is_empty for d in self.disjuncts)

    @property
    def word_count(self) -> int:
        """Number of non-meta terms of the longest disjunct (proximity needs two). A query
        that is one identifier (``os.pathsep``, ``Persistent.merge``, ``os.path.join``:
        :data:`IDENTIFIER`) counts as one word: its terms stand side by side wherever it
        occurs, so proximity would only measure how short the page is, and fused by rank
        with the score it put a page that names the identifier once above the page that
        defines it (issue 36)."""
        terms = max((len(d.all_terms) for d in self.disjuncts), default=0)
        return 1 if terms >= 2 and IDENTIFIER.fullmatch(self.text.strip()) else terms


@dataclass(slots=True)
class _Builder:
    terms: list[str] = field(default_factory=list)
    meta: list[str] = field(default_factory=list)
    phrases: list[Phrase] = field(default_factory=list)
    negated_terms: list[str] = field(default_factory=list)
    negated_phrases: list[Phrase] = field(default_factory=list)
    # indexes into terms of the loose (unquoted, not negated) words, run by run
    runs: list[list[int]] = field(default_factory=lambda: [[]])

    def add_loose(self, terms: list[str]) -> None:
        self.runs[-1].extend(range(len(self.terms), len(self.terms) + len(terms)))
        self.terms.extend(terms)

    def end_run(self) -> None:
        if self.runs[-1]:
            self.runs.append([])

    def build(self) -> Conjunct:
        runs = tuple(tuple(self.terms[i] for i in run) for run in self.runs if len(run) > 1)
        return Conjunct(tuple(self.terms), tuple(dict.fromkeys(self.meta)),
                        tuple(self.phrases), tuple(dict.fromkeys(self.negated_terms)),
                        tuple(self.negated_phrases), runs=runs)


class QueryParser:
    """Parse queries with one analyzer. Stateless between calls; safe to share."""

    def __init__(self, analyzer: TextAnalyzer | None = None) -> None:
        self._analyzer = analyzer or TextAnalyzer()

    def parse(self, text: str, *, ui_lang: str = "en", safe_search: bool = True,
              add_auto_meta: bool = True) -> ParsedQuery:
        messages: list[str] = []
        text = (text or "").replace("\x00", " ")
        if len(text) > 2000:
            messages.append("query shortened to its first 2000 characters")
            text = text[:2000]
        text = expand_conditionals(text)
        text, ranges = strip_ranges(text)
        if ranges:
            messages.append(f"result ranges ({' '.join(ranges)}) are not supported: the query "
                            "is searched as one")
        body, controls = self._controls(text, messages)
        if body.count('"') % 2:
            messages.append("unbalanced quote: the last phrase runs to the end of the query")
            body += '"'
        lang = self._query_lang(body, ui_lang)
        disjuncts: list[Conjunct] = []
        rewritten_parts: list[str] = []
        guessed = False
        for raw in split_disjuncts(body):
            part = raw.strip()
            if not part:
                continue
            pieces = [part]
            if controls.guess:
                pieces = self._guess(part, lang)  # a guess may itself produce disjuncts
                guessed = guessed or pieces != [part]
            for piece in pieces:
                conjunct = self._conjunct(piece, lang, messages)
                if add_auto_meta:
                    conjunct = self._auto_meta(conjunct, lang, safe_search)
                disjuncts.append(conjunct)
                rewritten_parts.append(piece)
        if not disjuncts or all(d.is_empty for d in disjuncts):
            if not any(m.startswith("empty") for m in messages):
                messages.append("empty query: type some words to search for")
            disjuncts = [d for d in disjuncts if not d.is_empty]
        highlight = _highlight_words(body)
        return ParsedQuery(text=text, disjuncts=tuple(disjuncts), controls=controls, lang=lang,
                           rewritten=" | ".join(rewritten_parts), messages=tuple(messages),
                           highlight=highlight, guessed=guessed)

    # --- stages ---------------------------------------------------------------------------

    def _controls(self, text: str, messages: list[str]) -> tuple[str, Controls]:
        controls = Controls()
        kept: list[str] = []
        for token in tokens_keep_quotes(text):
            match = _META_RE.match(token)
            if not match or token.startswith('"'):
                kept.append(token)
                continue
            prefix, value = match.group(1).lower(), match.group(2)
            if prefix not in CONTROL_PREFIXES:
                kept.append(token)
                continue
            if prefix in ("i", "index"):
                index = ascii_int(value, signed=False)
                if index is not None:
                    controls = replace(controls, index=index)
                else:
                    messages.append(f"i:{value} is not a crawl timestamp (ignored)")
            elif prefix == "raw":
                controls = replace(controls, raw=value not in ("0", "false"))
            elif prefix == "no":
                option = value.lower()
                if option in NO_OPTIONS:
                    controls = replace(controls, **{option: False})
                else:
                    messages.append(f"unknown control word no:{value} (ignored); known: "
                                    + ", ".join(f"no:{o}" for o in sorted(NO_OPTIONS)))
            elif prefix in ("w", "weight"):
                weight = ascii_decimal(value)
                if weight is not None and 0 < weight < 1e6:
                    controls = replace(controls, weight=weight)
                else:
                    messages.append(f"{prefix}:{value} is not a positive weight (ignored)")
            elif prefix in ("m", "mix"):
                # the search page takes m:NAME out and searches that mix (ranking.params); one
                # reaching the parser came another way (a shard request, a mix's own query)
                messages.append(f"{prefix}:{value} chooses a crawl mix only in the search "
                                "box (ignored here)")
            # highlight:<x> is dropped silently, as Yioop does
        return " ".join(kept), controls

    def _query_lang(self, body: str, ui_lang: str) -> str:
        explicit = re.search(r"(?:^|\s)lang:([a-zA-Z]{2,3}(?:-[a-zA-Z0-9]+)?)", body)
        # lang:all (the page's "Any language") names no language to analyse the words in:
        # they are stemmed as the guessed or the reader's language, as without it
        if explicit and explicit.group(1).lower() != "all":
            return explicit.group(1).lower()
        words = " ".join(t for t in tokens_keep_quotes(body) if not _META_RE.match(t))
        if len(words.encode()) >= 32:
            guess = guess_text_language(words.replace('"', " "), None)
            if guess:
                return guess
        return (ui_lang or "en").lower()

    def _guess(self, part: str, lang: str) -> list[str]:
        """guessSemantics: domain-like terms become site:, a lone letter becomes 'letter x'."""
        tokens = tokens_keep_quotes(part)
        plain = [t for t in tokens if not t.startswith(("-", '"'))]
        if len(part) > 4:
            out = []
            for token in tokens:
                low = token.lower()
                if (not token.startswith(("-", '"')) and ":" not in low and "@" not in low
                        and (low.endswith(GUESS_SITE_SUFFIXES) or low.startswith("www."))
                        and "." in low.strip(".")):
                    out.append(f"site:{low}")
                else:
                    out.append(token)
            return [" ".join(out)]
        if len(plain) == 1 and len(tokens) == 1 and len(plain[0]) == 1 and plain[0].isalpha():
            word = LETTER_WORD.get(major(lang), "letter")
            return [f"{word} {plain[0]}", plain[0]]
        return [part]

    def _conjunct(self, part: str, lang: str, messages: list[str]) -> Conjunct:
        builder = _Builder()
        for token in tokens_keep_quotes(part):
            negate = token.startswith("-") and len(token) > 1
            body = token[1:] if negate else token
            if negate or body.startswith('"') or _META_RE.match(body):
                builder.end_run()
            if body.startswith('"'):
                phrase = self._phrase(body.strip('"'), lang)
                if phrase is None:
                    continue
                if len(phrase.terms) == 1 and phrase.terms[0] is not None:
                    (builder.negated_terms if negate else builder.terms).append(phrase.terms[0])
                else:
                    (builder.negated_phrases if negate else builder.phrases).append(phrase)
                continue
            match = _META_RE.match(body)
            if match and match.group(1).lower() in META_PREFIXES:
                word = meta_word(match.group(1), match.group(2))
                (builder.negated_terms if negate else builder.meta).append(word)
                continue
            if match and match.group(1).lower() in CONTROL_PREFIXES:
                continue
            terms = self._analyzer.query_terms(body, lang)
            if negate:
                builder.negated_terms.extend(terms)
            else:
                builder.add_loose(terms)
        self._drop_stop_words(builder, lang)
        return builder.build()

    def stop_terms(self, lang: str) -> frozenset[str]:
        """The terms of ``lang``'s stop words, analysed as query words are
        (:meth:`indexer.core.text.TextAnalyzer.stop_terms`)."""
        return self._analyzer.stop_terms(lang)

    def _drop_stop_words(self, builder: _Builder, lang: str) -> None:
        """Drop the stop words among the loose (unquoted, not negated) words when the query
        has other words to search for: a stop word is in nearly every page, so it narrows
        nothing, and its DFR relevance is about the same on every page (a term far more
        common than the documents, :func:`ranking.core.scoring.formulas.dfr_relevance`), which only
        adds noise. Quoted phrases keep them. A dropped stop word ends a run of loose words
        (the words around it are not side by side in the pages that match the query)."""
        stop = self.stop_terms(lang)
        drop = {i for run in builder.runs for i in run if builder.terms[i] in stop}
        if drop and (len(drop) < len(builder.terms) or builder.phrases):
            keep = [i for i in range(len(builder.terms)) if i not in drop]
            at = {old: new for new, old in enumerate(keep)}
            runs: list[list[int]] = [[]]
            for run in builder.runs:
                for i in run:
                    if i in drop:
                        runs.append([])
                    else:
                        runs[-1].append(at[i])
                runs.append([])
            builder.terms = [builder.terms[i] for i in keep]
            builder.runs = runs

    def _phrase(self, text: str, lang: str) -> Phrase | None:
        terms: list[str | None] = []
        for chunk in re.split(r"(\*)", text):
            if chunk == "*":
                if terms and terms[-1] is None:
                    continue
                terms.append(None)
            elif chunk.strip():
                terms.extend(self._analyzer.query_terms(chunk, lang))
        while terms and terms[0] is None:
            terms.pop(0)
        while terms and terms[-1] is None:
            terms.pop()
        if not terms:
            return None
        return Phrase(tuple(terms), text)

    def _auto_meta(self, conjunct: Conjunct, lang: str, safe_search: bool) -> Conjunct:
        words = (*conjunct.meta, *conjunct.negated_terms)
        if any(w.startswith(SCOPING_PREFIXES) for w in conjunct.meta):
            return conjunct
        auto: list[str] = []
        if not any(w.startswith("safe:") for w in words):
            auto.append("safe:true" if safe_search else "safe:all")
        if not any(w.startswith(("lang:", "media:image")) for w in words):
            auto.append(f"lang:{major(lang).lower()}")
        return replace(conjunct, auto_meta=tuple(auto))


def meta_word(prefix: str, value: str) -> str:
    """A query's meta word as the index spells it: ``prefix:value`` lower-cased, except a
    url value (:data:`URL_META_PREFIXES`), where only the scheme and host are, and ``site:``,
    which drops a scheme and a trailing slash."""
    prefix = prefix.lower()
    if prefix in URL_META_PREFIXES:
        scheme, sep, rest = value.partition("://")
        if not sep:
            return f"{prefix}:{value}"  # not a url (e.g. info:'s url hash): verbatim
        host, slash, path = rest.partition("/")
        return f"{prefix}:{scheme.lower()}://{host.lower()}{slash}{path}"
    value = value.lower()
    if prefix == "site":
        value = value.removeprefix("http://").removeprefix("https://").rstrip("/")
    return f"{prefix}:{value}"


def split_disjuncts(text: str) -> list[str]:
    parts, current, quoted = [], [], False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "|" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def tokens_keep_quotes(text: str) -> list[str]:
    """Split on white space, keeping ``"quoted phrases"`` (and ``-"negated ones"``) whole."""
    return [m.group(0) for m in re.finditer(r'-?"[^"]*"?|[^\s"]+', text)]


def _highlight_words(body: str) -> tuple[str, ...]:
    words: list[str] = []
    for token in tokens_keep_quotes(body):
        if token.startswith("-") or token == "|":
            continue
        if _META_RE.match(token):
            continue
        for word in re.findall(r"\w+", token.strip('"')):
            if word.lower() not in words:
                words.append(word.lower())
    return tuple(words)


def query_word_terms(parsed: ParsedQuery) -> tuple[list[str], list[int]]:
    """Distinct non-meta query terms (all disjuncts) and the largest count of each in one
    disjunct (a repeated term counts twice)."""
    mult: dict[str, int] = {}
    for d in parsed.disjuncts:
        counts: dict[str, int] = {}
        for t in d.all_terms:
            counts[t] = counts.get(t, 0) + 1
        for t, c in counts.items():
            mult[t] = max(mult.get(t, 0), c)
    return list(mult), list(mult.values())

