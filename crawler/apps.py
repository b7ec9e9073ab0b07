from django.apps import AppConfig, apps


class CrawlerConfig(AppConfig):
    name = "crawler"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .link_analysis import FACTS

        # link analysis reads crawls only through what the crawler gives it
        apps.get_app_config("linkgraph").crawl_facts = FACTS
