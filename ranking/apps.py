from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class RankingConfig(AppConfig):
    name = "ranking"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .views import forget_search_options

        for sender in ("crawler.PageOptions", "crawler.Crawl"):
            post_save.connect(forget_search_options, sender=sender,
                              dispatch_uid=f"search-options-{sender}")
            post_delete.connect(forget_search_options, sender=sender,
                                dispatch_uid=f"search-options-del-{sender}")
