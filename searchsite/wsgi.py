"""WSGI entry point, served by gunicorn under ``manage.py up``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "searchsite.settings.base")
application = get_wsgi_application()
