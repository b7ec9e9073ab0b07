"""The messages of a search, typed by what they tell the reader: the page sorts them by kind.

Layer: ``ranking.core``. :class:`~ranking.core.search.pipeline.SearchResult` carries
:class:`SearchMessage` values; whoever makes a message says its kind, so that the views
(``ranking/views.py``) sort them by kind and never by their wording:

- notice: about the query as typed (syntax, a value replaced by its default, a word ignored);
- warning: the results may be incomplete (a shard skipped or too slow, a time budget run out);
- error: nothing could be searched (no index, no shard answered, the search failed);
- rewrite: the query actually searched, which the page shows as such.

A shard's messages cross the shard protocol as plain text (:class:`~ranking.core.shard.local.
candidates.Candidates`); :func:`shard_message` gives the kind of each text a shard sends.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from ranking.core.postings.limits import TIME_BUDGET_MESSAGE, TRUNCATED_MESSAGE


class MessageKind(enum.Enum):
    NOTICE = "notice"
    WARNING = "warning"
    ERROR = "error"
    REWRITE = "rewrite"


@dataclass(frozen=True, slots=True)
class SearchMessage:
    """One message of a search: its kind and the text shown."""

    kind: MessageKind
    text: str

    def __str__(self) -> str:
        return self.text

    @staticmethod
    def notice(text: str) -> SearchMessage:
        return SearchMessage(MessageKind.NOTICE, text)

    @staticmethod
    def warning(text: str) -> SearchMessage:
        return SearchMessage(MessageKind.WARNING, text)

    @staticmethod
    def error(text: str) -> SearchMessage:
        return SearchMessage(MessageKind.ERROR, text)


# the kind of each message a shard sends with its candidates (ranking.core.shard.matching);
# another text (from a peer of another version) is a notice
SHARD_MESSAGE_KINDS = {
    TIME_BUDGET_MESSAGE: MessageKind.WARNING,
    TRUNCATED_MESSAGE: MessageKind.NOTICE,
}


def shard_message(text: str) -> SearchMessage:
    """A message a shard sent with its candidates, typed."""
    return SearchMessage(SHARD_MESSAGE_KINDS.get(text, MessageKind.NOTICE), text)


def message_texts(messages: Iterable[SearchMessage]) -> list[str]:
    """The texts of ``messages``, in order (what the JSON answer and a failed page show)."""
    return [m.text for m in messages]
