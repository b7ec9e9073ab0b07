"""Admin for classifiers: make one (a label), find candidate pages in an index by a query,
label them yes or no (the page the current model is least sure of comes next), see the
cross-validated accuracy, and finish a version for crawls; the Page Options inline that picks
the classifiers a crawl runs (:class:`ClassifierUseInline`, shown by the crawler's Page
Options admin).

Every write calls ``classifiers.services``; refusals and bad input come back as messages or
form errors, never as server errors.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from operations.admin_safety import SafeModelAdmin

from . import selectors, services
from .models import Classifier, ClassifierUse
from .sources import NoCandidateSource, candidate_source


class ClassifierUseInline(admin.TabularInline):
    """Page Options: the classifiers its crawls run (finished ones only, at the version
    finished when the crawl starts) and their rank weights at search time."""

    model = ClassifierUse
    extra = 0
    fields = ("classifier", "classify", "rank_weight")
    verbose_name_plural = "classifiers (crawl time: run on every page; search time: rank weight)"


class CandidateSearchForm(forms.Form):
    crawl = forms.TypedChoiceField(coerce=int, label="Index of crawl")
    query = forms.CharField(max_length=500)
    count = forms.IntegerField(min_value=1, max_value=services.MAX_CANDIDATES, initial=30,
                               label="Pages")

    def __init__(self, *args, indexes: list[tuple[int, str]] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["crawl"].choices = [(t, f"{name} ({t})") for t, name in indexes]


class LabelForm(forms.Form):
    page = forms.IntegerField(min_value=1)
    answer = forms.ChoiceField(choices=[("yes", "Yes"), ("no", "No"), ("clear", "Unlabel")])


ANSWERS = {"yes": True, "no": False, "clear": None}


@admin.register(Classifier)
class ClassifierAdmin(SafeModelAdmin):
    list_display = ("label", "description", "threshold", "finished_version", "labels",
                    "accuracy", "label_link")
    search_fields = ("label", "description")
    fields = ("label", "description", "threshold")

    def get_urls(self):
        own = [path("<int:classifier_id>/label/", self.admin_site.admin_view(self.label_view),
                    name="classifiers_classifier_label")]
        return own + super().get_urls()

    @admin.display(description="finished version")
    def finished_version(self, obj: Classifier) -> str:
        return str(obj.version) if obj.version else "not finished"

    @admin.display(description="labels (yes / no)")
    def labels(self, obj: Classifier) -> str:
        status = selectors.classifier_status(obj)
        return f"{status.labelled} ({status.positives} / {status.negatives})"

    @admin.display(description="accuracy")
    def accuracy(self, obj: Classifier) -> str:
        model = selectors.classifier_status(obj).model
        if model is None or model.accuracy is None:
            return "-"
        return f"{model.accuracy:.1%} ({model.folds}-fold)"

    @admin.display(description="")
    def label_link(self, obj: Classifier) -> str:
        return format_html('<a href="{}">Label pages</a>',
                           reverse("admin:classifiers_classifier_label", args=[obj.pk]))

    def label_view(self, request: HttpRequest, classifier_id: int):
        """The labelling page (see the module docstring); its forms post back to it."""
        classifier = get_object_or_404(Classifier, pk=classifier_id)
        if not self.has_view_or_change_permission(request, classifier):
            raise PermissionDenied
        try:
            indexes = candidate_source().indexes()
        except NoCandidateSource:
            indexes = []
        search = CandidateSearchForm(indexes=indexes)
        if request.method == "POST":
            if not self.has_change_permission(request, classifier):
                raise PermissionDenied
            search, done = self._post(request, classifier, indexes)
            if done:
                return HttpResponseRedirect(request.path)
        page, score = selectors.classifier_next_page(classifier)
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta,
            "title": f"Label pages: {classifier.label}", "classifier": classifier,
            "status": selectors.classifier_status(classifier), "page": page, "score": score,
            "labelled": selectors.labelled_pages(classifier), "search": search,
            "has_indexes": bool(indexes),
            "may_change": self.has_change_permission(request, classifier),
        }
        return TemplateResponse(request, "admin/classifiers/classifier/label.html", context)

    def _post(self, request: HttpRequest, classifier: Classifier,
              indexes: list[tuple[int, str]]) -> tuple[CandidateSearchForm, bool]:
        """Handle one of the page's forms: (the search form to show again, done: redirect)."""
        action = request.POST.get("action", "")
        search = CandidateSearchForm(indexes=indexes)
        try:
            if action == "find":
                search = CandidateSearchForm(request.POST, indexes=indexes)
                if not search.is_valid():
                    return search, False
                data = search.cleaned_data
                added, had = services.classifier_candidates_add(
                    classifier.pk, data["crawl"], data["query"], data["count"])
                self.message_user(request, f"{added} pages added to label ({had} were "
                                           "already there).", messages.SUCCESS)
            elif action == "label":
                form = LabelForm(request.POST)
                if not form.is_valid():
                    self.message_user(request, "That label was not understood.", messages.ERROR)
                    return search, True
                services.classifier_label(classifier.pk, form.cleaned_data["page"],
                                          ANSWERS[form.cleaned_data["answer"]])
            elif action == "finish":
                version = services.classifier_finish(classifier.pk)
                self.message_user(request, f"Version {version} of {classifier.label} is "
                                           "finished: crawls whose Page Options use it run it "
                                           "from their start.", messages.SUCCESS)
            else:
                self.message_user(request, "Unknown action.", messages.ERROR)
        except services.ClassifierServiceError as exc:
            self.message_user(request, str(exc), messages.ERROR)
        return search, True
