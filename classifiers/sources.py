"""Where the admin finds pages to label: the contract the search side fulfils.

Layer: Django glue of ``classifiers``, below the crawler and the search; the search app
(``ranking``) gives an implementation to :class:`classifiers.apps.ClassifiersConfig` when it
starts, the way the crawler gives link analysis its crawl facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from django.apps import apps


@dataclass(frozen=True, slots=True)
class CandidatePage:
    """A page of an index as a classifier reads it: its url, title and description (its
    stored summary's)."""

    url: str
    title: str
    description: str


class CandidateSource(Protocol):
    def indexes(self) -> list[tuple[int, str]]:
        """(crawl timestamp, name) of every crawl with an index that can be searched, newest
        first."""
        ...

    def pages(self, timestamp: int, query: str, limit: int) -> list[CandidatePage]:
        """The first ``limit`` pages of crawl ``timestamp``'s index for ``query``, in result
        order (LookupError when the crawl has no index)."""
        ...


class NoCandidateSource(LookupError):
    """No app gave a candidate source (the search app is not installed)."""


def candidate_source() -> CandidateSource:
    source = apps.get_app_config("classifiers").candidate_source
    if source is None:
        raise NoCandidateSource("no search app gives candidate pages")
    return source
