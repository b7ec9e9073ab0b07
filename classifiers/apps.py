from __future__ import annotations

from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from .sources import CandidateSource


class ClassifiersConfig(AppConfig):
    """Classifiers, as Yioop has them: made in the admin from pages of an index labelled yes or
    no, run by the fetchers on each page of the crawls whose Page Options use them (``class:``
    meta words, per-page scores that can weigh in the ranking).

    ``candidate_source``: where the admin finds candidate pages by a query (the crawls with an
    index, and a query's pages), given by the app that searches: ``ranking`` sets it in its
    ``ready()``. This app sits below the crawler and never imports the search side (see
    :class:`classifiers.sources.CandidateSource`).
    """

    name = "classifiers"
    default_auto_field = "django.db.models.BigAutoField"
    candidate_source: CandidateSource | None = None
