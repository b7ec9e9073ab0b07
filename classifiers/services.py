"""Writes of the classifiers app: candidates found by a query, labels, training, finishing.

Layer: Django glue. The admin (``classifiers.admin``) calls these; each raises
:class:`ClassifierServiceError` with a message for the person using it when it cannot do what
was asked. Training is :mod:`classifiers.core.training`'s; the model is stored in its own
format (:meth:`classifiers.core.model.LinearModel.to_bytes`), never pickled.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from classifiers.core.errors import NotEnoughLabels
from classifiers.core.features import FEATURES, page_text
from classifiers.core.training import cross_validate, train

from .models import Classifier, ClassifierModel, ClassifierPage, ClassifierUse
from .sources import NoCandidateSource, candidate_source

logger = logging.getLogger(__name__)
MAX_CANDIDATES = 200  # pages one query may add


class ClassifierServiceError(Exception):
    """What was asked cannot be done; the message says why."""


def _classifier(classifier_id: int, lock: bool = False) -> Classifier:
    rows = Classifier.objects.select_for_update() if lock else Classifier.objects
    try:
        return rows.get(pk=classifier_id)
    except Classifier.DoesNotExist:
        raise ClassifierServiceError(f"classifier {classifier_id} does not exist") from None


def classifier_candidates_add(classifier_id: int, timestamp: int, query: str,
                              limit: int = 50) -> tuple[int, int]:
    """Add the first ``limit`` pages of crawl ``timestamp``'s index for ``query`` to the
    classifier's candidates, after those it has (their order is the order labels are asked
    for before there is a model). Returns (pages added, pages it already had)."""
    query = " ".join(query.split())
    if not query:
        raise ClassifierServiceError("Type a query to find pages with.")
    if not 1 <= limit <= MAX_CANDIDATES:
        raise ClassifierServiceError(f"Ask for 1 to {MAX_CANDIDATES} pages.")
    classifier = _classifier(classifier_id)
    try:
        found = candidate_source().pages(timestamp, query, limit)
    except (LookupError, NoCandidateSource) as exc:
        raise ClassifierServiceError(f"No pages from crawl {timestamp}: {exc}") from None
    with transaction.atomic():
        have = set(ClassifierPage.objects.filter(classifier=classifier)
                   .values_list("url", flat=True))
        start = (ClassifierPage.objects.filter(classifier=classifier)
                 .aggregate(m=Max("rank"))["m"])
        start = 0 if start is None else start + 1
        new = []
        for page in found:
            if page.url in have:
                continue
            have.add(page.url)
            new.append(ClassifierPage(classifier=classifier, url=page.url[:2048],
                                      title=page.title[:500], description=page.description,
                                      crawl_timestamp=timestamp, query=query[:500],
                                      rank=start + len(new)))
        ClassifierPage.objects.bulk_create(new)
    return len(new), len(found) - len(new)


def classifier_label(classifier_id: int, page_id: int, label: bool | None) -> ClassifierModel | None:
    """Label page ``page_id`` of the classifier yes (True), no (False) or not at all (None),
    then train again (:func:`classifier_train`)."""
    updated = ClassifierPage.objects.filter(pk=page_id, classifier_id=classifier_id).update(
        label=label, labelled_at=None if label is None else timezone.now())
    if not updated:
        raise ClassifierServiceError(f"classifier {classifier_id} has no page {page_id}")
    return classifier_train(classifier_id)


def classifier_train(classifier_id: int) -> ClassifierModel | None:
    """Train the classifier's draft (the model numbered ``version + 1``) on its labelled
    pages and cross-validate it; None (and no draft) until a page is labelled yes and one
    no. The accuracy stays None with fewer than two of each."""
    with transaction.atomic():
        classifier = _classifier(classifier_id, lock=True)
        rows = list(ClassifierPage.objects.filter(classifier=classifier, label__isnull=False)
                    .order_by("pk").values_list("title", "description", "label"))
        texts = [page_text(title, description) for title, description, _ in rows]
        labels = [bool(label) for _, _, label in rows]
        draft = classifier.version + 1
        try:
            model = train(texts, labels)
        except NotEnoughLabels:
            ClassifierModel.objects.filter(classifier=classifier, version=draft).delete()
            return None
        try:
            cv = cross_validate(texts, labels, classifier.threshold)
            accuracy, folds = cv.accuracy, cv.folds
        except NotEnoughLabels:
            accuracy, folds = None, 0
        positives = sum(labels)
        row, _ = ClassifierModel.objects.update_or_create(
            classifier=classifier, version=draft,
            defaults={"features": FEATURES, "coefficients": model.to_bytes(),
                      "accuracy": accuracy, "folds": folds, "positives": positives,
                      "negatives": len(labels) - positives, "trained_at": timezone.now()})
    logger.info("classifier %s: draft v%d trained on %d pages (accuracy %s)",
                classifier.label, draft, len(labels), accuracy)
    return row


def classifier_uses_copy(from_options_id: int, to_options_id: int) -> int:
    """Give Page Options ``to_options_id`` the classifier uses of ``from_options_id`` (a
    copied profile); returns how many."""
    uses = [ClassifierUse(page_options_id=to_options_id, classifier_id=u.classifier_id,
                          classify=u.classify, rank_weight=u.rank_weight)
            for u in ClassifierUse.objects.filter(page_options_id=from_options_id)]
    ClassifierUse.objects.bulk_create(uses)
    return len(uses)


def classifier_finish(classifier_id: int) -> int:
    """Make the classifier's draft the version crawls use; returns that version. Crawls that
    already run keep the version they recorded when they started."""
    with transaction.atomic():
        classifier = _classifier(classifier_id, lock=True)
        draft = ClassifierModel.objects.filter(classifier=classifier,
                                               version=classifier.version + 1).first()
        if draft is None:
            raise ClassifierServiceError(
                f"{classifier.label}: nothing new to finish; label pages yes and no first"
                if not classifier.version else
                f"{classifier.label}: version {classifier.version} is already finished; "
                "label more pages to train a new one")
        classifier.version = draft.version
        classifier.save(update_fields=["version"])
    return draft.version
