"""The crawler app's configuration: what it connects as it loads, once the models are ready."""

from django.apps import AppConfig, apps
from django.core import checks

from .checks import ca_bundle_check


class CrawlerConfig(AppConfig):
    name = "crawler"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # these modules import the models and the Celery tasks: only once the registry is ready
        from . import link_analysis, sending, signals

        # link analysis reads crawls only through what the crawler gives it
        apps.get_app_config("linkgraph").crawl_facts = link_analysis.FACTS
        # runs are queued by task name; link analysis is handed its sender, never imports it
        link_analysis.send_runs_with(sending.send_link_analysis)
        signals.crawl_documents_complete.connect(link_analysis.on_documents_complete,
                                                 dispatch_uid="crawler.link_analysis")
        checks.register(ca_bundle_check)
