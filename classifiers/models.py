"""Classifier rows: the classifiers, their candidate and labelled pages, their trained models
(one row per version) and which Page Options use them.

Layer: Django glue. Writes go through ``classifiers.services``, reads that feed the crawl
through ``classifiers.selectors``. The Page Options a use belongs to is named by the string
``"crawler.PageOptions"``: this app imports nothing of the crawler.

Versions: training after each label rewrites the classifier's *draft*, the model numbered
``version + 1``; finishing the classifier makes the draft its published ``version``. A model
row whose number is at most the published version never changes again, so a crawl that
recorded the version it runs (in its copy of its Page Options) reads the same model for its
whole life, resumed or not.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from classifiers.core.apply import LABEL_RE


def _range(low: float, high: float) -> list:
    return [MinValueValidator(low), MaxValueValidator(high)]


class Classifier(models.Model):
    """A yes/no classifier of pages, named by its label (the meta word ``class:<label>``)."""

    label = models.CharField(
        max_length=50, unique=True,
        validators=[RegexValidator(LABEL_RE, "Lower-case letters, digits, - and _ only, "
                                             "starting with a letter or digit.")],
        help_text="Pages of the class get the meta word class:LABEL (search with it). "
                  "Lower-case letters, digits, - and _.")
    description = models.TextField(blank=True)
    threshold = models.FloatField(
        default=0.5, validators=_range(0.0, 1.0),
        help_text="A page whose score (the model's probability that it is of the class) is at "
                  "or above this gets the meta word. 0 to 1; default 0.5.")
    version = models.PositiveIntegerField(
        default=0, editable=False,
        help_text="The model version crawls use (0: not finished yet).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["label"]

    def __str__(self) -> str:
        return self.label

    @property
    def slot(self) -> int:
        """Its place in every page's classifier scores: fixed for its life and never given to
        another classifier (database ids are not reused)."""
        return int(self.pk) - 1

    @property
    def finished(self) -> bool:
        return self.version > 0


class ClassifierPage(models.Model):
    """A page found for a classifier by a query: a candidate until it is labelled."""

    classifier = models.ForeignKey(Classifier, on_delete=models.CASCADE, related_name="pages")
    url = models.CharField(max_length=2048)
    title = models.CharField(max_length=500, blank=True)
    description = models.TextField(blank=True)
    crawl_timestamp = models.BigIntegerField(help_text="The crawl whose index it came from.")
    query = models.CharField(max_length=500)
    rank = models.PositiveIntegerField(
        help_text="Its place among the classifier's candidates in query order (the order "
                  "labels are asked for before a model exists).")
    label = models.BooleanField(null=True, blank=True, help_text="Yes, no, or not labelled.")
    labelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["rank"]
        constraints = [models.UniqueConstraint(fields=["classifier", "url"],
                                               name="unique_page_per_classifier")]

    def __str__(self) -> str:
        return self.url


class ClassifierModel(models.Model):
    """One trained version of a classifier: its coefficients (``classifiers.core.model``'s
    stored form, read without unpickling) and how well it did."""

    classifier = models.ForeignKey(Classifier, on_delete=models.CASCADE, related_name="models")
    version = models.PositiveIntegerField()
    features = models.CharField(max_length=50)
    coefficients = models.BinaryField()
    accuracy = models.FloatField(null=True, blank=True,
                                 help_text="Cross-validated accuracy (None: too few labels).")
    folds = models.PositiveSmallIntegerField(default=0)
    positives = models.PositiveIntegerField(default=0)
    negatives = models.PositiveIntegerField(default=0)
    trained_at = models.DateTimeField()

    class Meta:
        ordering = ["classifier", "-version"]
        constraints = [models.UniqueConstraint(fields=["classifier", "version"],
                                               name="one_model_per_version")]

    def __str__(self) -> str:
        return f"{self.classifier} v{self.version}"


class ClassifierUse(models.Model):
    """A classifier used by a Page Options profile (Yioop's "use to classify" and "use to
    rank"); crawls run it when it is finished."""

    page_options = models.ForeignKey("crawler.PageOptions", on_delete=models.CASCADE,
                                     related_name="classifier_uses")
    classifier = models.ForeignKey(Classifier, on_delete=models.CASCADE, related_name="uses")
    classify = models.BooleanField(
        "use to classify", default=True,
        help_text="Add class:LABEL to the pages it scores at or above its threshold.")
    rank_weight = models.FloatField(
        "rank weight", default=0.0, validators=_range(0.0, 100.0),
        help_text="Search time: the page's score times this is added beside Doc Rank (0: not "
                  "used to rank). 0 to 100.")

    class Meta:
        ordering = ["classifier__label"]
        verbose_name = "classifier"
        constraints = [models.UniqueConstraint(fields=["page_options", "classifier"],
                                               name="one_use_per_classifier")]

    def __str__(self) -> str:
        return str(self.classifier)

    def clean(self) -> None:
        super().clean()
        if not self.classify and not self.rank_weight:
            raise ValidationError("Use it to classify, to rank (a weight above 0), or both.")
