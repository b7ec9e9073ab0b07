"""The Django project: settings from the environment, URLs, the Celery app and WSGI."""

from .celery import app as celery_app

__all__ = ["celery_app"]
