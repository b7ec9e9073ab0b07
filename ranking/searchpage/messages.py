"""The search's messages in the reader's language.

Layer: Django glue of the ``ranking`` app. The messages are made in English by code that cannot
use Django's translations (``ranking.core``: the parser, the pipeline, the shards) or that also
answers the JSON API, whose messages stay English (a client may match them). The search page
shows each through :func:`translated`: the message is matched against ``PATTERNS``, the English
forms of the messages with their values as named groups, and the matching form's translation
is filled with the values. A message no pattern matches (a peer of another version, a reason
from the operating system) is shown as it came. :func:`index_label` does the same for the name
of the index searched.
"""

from __future__ import annotations

import re

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from ranking.core.postings.limits import TIME_BUDGET_MESSAGE, TRUNCATED_MESSAGE
from ranking.core.search.pipeline import NO_SHARD_ANSWERED

NOT_EVERY_PART = "not every part of the index answered in time"

# (the English message as a regular expression, its translatable form); each group's name is
# a placeholder of the form, and the English form with the groups filled in is the message
PATTERNS: tuple[tuple[re.Pattern[str], Promise], ...] = tuple(
    (re.compile(pattern, re.DOTALL), form) for pattern, form in (
        (r"the query was shortened to its first (?P<n>\d+) characters",
         _("the query was shortened to its first %(n)s characters")),
        (r"query shortened to its first (?P<n>\d+) characters",
         _("the query was shortened to its first %(n)s characters")),
        (r"(?P<name>num|limit)=(?P<value>.*) is not a valid number \(default used\)",
         _("%(name)s=%(value)s is not a valid number (default used)")),
        (r"its=(?P<value>.*) is not a crawl timestamp \(newest used\)",
         _("its=%(value)s is not a crawl timestamp (newest used)")),
        (r"result ranges \((?P<ranges>.*)\) are not supported: the query is searched as one",
         _("result ranges (%(ranges)s) are not supported: the query is searched as one")),
        (r"unbalanced quote: the last phrase runs to the end of the query",
         _("unbalanced quote: the last phrase runs to the end of the query")),
        (r"empty query: type some words to search for",
         _("empty query: type some words to search for")),
        (r"i:(?P<value>.*) is not a crawl timestamp \(ignored\)",
         _("i:%(value)s is not a crawl timestamp (ignored)")),
        (r"unknown control word no:(?P<value>.*) \(ignored\); known: (?P<known>.*)",
         _("unknown control word no:%(value)s (ignored); known: %(known)s")),
        (r"(?P<word>w|weight):(?P<value>.*) is not a positive weight \(ignored\)",
         _("%(word)s:%(value)s is not a positive weight (ignored)")),
        (r"(?P<word>m|mix):(?P<value>.*) chooses a crawl mix only in the search box "
         r"\(ignored here\)",
         _("%(word)s:%(value)s chooses a crawl mix only in the search box (ignored here)")),
        (re.escape(TIME_BUDGET_MESSAGE),
         _("search stopped at the time budget; results are partial")),
        (re.escape(TRUNCATED_MESSAGE),
         _("frequent words: only the first documents of each part of the index were read; "
           "results may be incomplete")),
        (re.escape(NO_SHARD_ANSWERED),
         _("no part of the index answered, so nothing could be found")),
        (re.escape(NOT_EVERY_PART), _("not every part of the index answered in time")),
        (r"there is no index to search yet", _("there is no index to search yet")),
        (r"no index has been built yet", _("no index has been built yet")),
        (r"no news has been indexed yet", _("no news has been indexed yet")),
        (r"there is no index for crawl (?P<its>\d+) \(known: (?P<known>.*)\)",
         _("there is no index for crawl %(its)s (known: %(known)s)")),
        (r"there is no crawl mix named (?P<name>.*) with crawls in it open to anonymous "
         r"search", _("there is no crawl mix named %(name)s with crawls in it open to "
                      "anonymous search")),
        (r"there is no crawl mix named (?P<name>.*) with crawls in it",
         _("there is no crawl mix named %(name)s with crawls in it")),
        (r"there is no crawl (?P<its>\d+) open to anonymous search",
         _("there is no crawl %(its)s open to anonymous search")),
        (r"no crawl of (?P<label>.*) has an index", _("no crawl of %(label)s has an index")),
        (r"the index of crawl (?P<its>\d+) on queue server (?P<server>\d+) cannot be read: "
         r"(?P<reason>.*)",
         _("the index of crawl %(its)s on queue server %(server)s cannot be read: "
           "%(reason)s")),
        (r"queue server (?P<server>\d+) has no index for this crawl",
         _("queue server %(server)s has no index for this crawl")),
        (r"the search failed: (?P<reason>.*)", _("the search failed: %(reason)s")),
        # why the cached page or the similar pages cannot be shown (ranking.views)
        (r"only http and https pages have a cached copy",
         _("only http and https pages have a cached copy")),
        (r"the stored copy of this page is damaged and cannot be shown",
         _("the stored copy of this page is damaged and cannot be shown")),
        (r"this page is not in the index", _("this page is not in the index")),
        (r"the page asked not to be archived \(NOARCHIVE\)",
         _("the page asked not to be archived (NOARCHIVE)")),
        (r"no copy of this page was kept", _("no copy of this page was kept")),
        (r"which page\? give its url", _("which page? give its url")),
        (r"the index could not be read: (?P<reason>.*)",
         _("the index could not be read: %(reason)s")),
    ))


def translated(message: str) -> str:
    """``message`` in the active language (see the module), or as it came."""
    for pattern, form in PATTERNS:
        match = pattern.fullmatch(message)
        if match is not None:
            return str(form) % match.groupdict()  # str(): the active language's form
    return message


# the words of an index's label (searchindex.selectors: "the newest index (crawl 17…)",
# "crawl 'docs' (17…)", "crawl mix 'news' (…)", "every finished crawl (3: …)"), longest first
LABEL_WORDS: tuple[tuple[str, Promise], ...] = (
    ("every finished crawl", _("every finished crawl")),
    ("the newest index", _("the newest index")),
    ("crawl mix", _("crawl mix")),
    ("crawl", _("crawl")),
)
_LABEL_WORD = re.compile(r"\b(" + "|".join(re.escape(w) for w, _f in LABEL_WORDS) + r")\b")
_QUOTED = re.compile(r"('[^']*'|\"[^\"]*\")")


def index_label(label: str) -> str:
    """An index's label in the active language: its words translated, the crawls' and mixes'
    names (quoted) kept as they are."""
    forms = dict(LABEL_WORDS)
    parts = _QUOTED.split(label)
    return "".join(part if i % 2 else _LABEL_WORD.sub(lambda m: str(forms[m.group(1)]), part)
                   for i, part in enumerate(parts))
