from django.apps import AppConfig


class IndexerConfig(AppConfig):
    name = "indexer"
    default_auto_field = "django.db.models.BigAutoField"
