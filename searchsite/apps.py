"""The project package as a Django app: what spans the other apps (the deployment check of
``/metrics``)."""

from django.apps import AppConfig
from django.core import checks


class SearchsiteConfig(AppConfig):
    """The project package as an app, for what spans the others: the deployment check of
    ``/metrics`` (``searchsite.metrics``)."""

    name = "searchsite"

    def ready(self) -> None:
        # the metrics module imports the crawler's models: only once the registry is ready
        from .metrics import metrics_token_check

        checks.register(metrics_token_check, checks.Tags.security, deploy=True)
