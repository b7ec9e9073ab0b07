from django.apps import AppConfig


class SearchsiteConfig(AppConfig):
    """The project package as an app, for what spans the others: the deployment check of
    ``/metrics`` (``searchsite.metrics``)."""

    name = "searchsite"

    def ready(self) -> None:
        from django.core import checks

        from .metrics import metrics_token_check

        checks.register(metrics_token_check, checks.Tags.security, deploy=True)
