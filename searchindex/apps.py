"""The search-index app's configuration: it keeps the choice in step with the crawls."""

from django.apps import AppConfig

from crawler import signals


class SearchIndexConfig(AppConfig):
    name = "searchindex"
    verbose_name = "Search index"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # the receivers' module imports the models: only once the app registry is ready
        from . import services

        signals.crawl_starting.connect(services.on_crawl_starting,
                                       dispatch_uid="searchindex.crawl_starting")
        signals.crawl_ended.connect(services.on_crawl_ended,
                                    dispatch_uid="searchindex.crawl_ended")
        signals.crawl_repeating.connect(services.on_crawl_repeating,
                                        dispatch_uid="searchindex.crawl_repeating")
        signals.crawl_replaced.connect(services.on_crawl_replaced,
                                       dispatch_uid="searchindex.crawl_replaced")
