"""The meta-word vocabulary: the prefixes of the position-less terms the crawler writes
(``site:``, ``lang:``, ``link:``...) and the query parser recognises.

Layer: ``indexer.core``, below both sides. The Yioop design document's meta words are terms
``prefix:value`` posted with frequency 0; a query names them to filter (``site:docs.python.org``)
and the search page appends some to every query (``safe:true``, ``lang:en``). The producer
(``crawler.core.processing.meta_words``, ``crawler.core.processing.indexing``) writes only prefixes listed here; the
parser (``ranking.core.query.parser``) reads a ``word:value`` as a meta word only when its prefix is
listed here, so a word such as ``SECRET_KEY:value`` stays text. Yioop's whole list is kept, so
queries written for Yioop (``date:``, ``class:``, ``modified:``...) parse the same.
"""

from __future__ import annotations

# the meta-word prefixes of the indexing plugins the engine ships (crawler.core.processing.plugins);
# a plugin's meta words are searchable only under a prefix listed here
PLUGIN_PREFIXES = ("api", "section")

# every prefix a query may name as a meta word
META_PREFIXES = frozenset({
    "class", "class-score", "cld", "code", "date", "dns", "duration", "filetype", "guid",
    "host", "info", "ip", "link", "location", "modified", "lang", "media", "numlinks", "os",
    "path", "robot", "safe", "server", "site", "size", "source", "time", "u", "version",
    # ours: the scraper that read a page (scraper:wordpress), its Open Graph type
    # (og:video.movie), and the indexing plugins' (crawler.core.processing.plugins)
    "scraper", "og", *PLUGIN_PREFIXES,
})
# the prefixes whose value is a url, written as the crawler wrote it (``link:`` on pages,
# ``source:`` on link documents, ``info:`` and ``location:``): its case is kept
URL_META_PREFIXES = frozenset({"info", "link", "location", "source"})
# prefixes written for the engine's own use, never read as a query's filter: ``fancy:<term>``,
# the short barrel of title and anchor words (indexer.core.documents.document.fancy_words) that
# ranking.core.postings.tiers reads before the full posting lists; ``defines:<key>`` and
# ``topic:<key>``, what a page defines and what its headings name, matched whole against a
# query (indexer.core.signals.definitions)
INTERNAL_PREFIXES = frozenset({"fancy", "defines", "topic"})
