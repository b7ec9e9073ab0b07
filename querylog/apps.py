from django.apps import AppConfig


class QueryLogConfig(AppConfig):
    name = "querylog"
    verbose_name = "query log"
    default_auto_field = "django.db.models.BigAutoField"
