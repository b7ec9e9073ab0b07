"""The operations app's configuration: it connects the login throttle's signal receivers."""

from django.apps import AppConfig


class OperationsConfig(AppConfig):
    name = "operations"

    def ready(self) -> None:
        # the throttle's module imports admin forms (auth models): only once the registry is ready
        from . import login_throttle  # noqa: F401  (its receivers connect on import)
