"""The operations app's configuration: it connects the login throttle's signal receivers and
registers the check of the client-address settings."""

from django.apps import AppConfig
from django.core import checks

from operations.client_address import client_address_header_check


class OperationsConfig(AppConfig):
    name = "operations"

    def ready(self) -> None:
        # the throttle's module imports admin forms (auth models): only once the registry is ready
        from . import login_throttle  # noqa: F401  (its receivers connect on import)

        checks.register(client_address_header_check, checks.Tags.security)
