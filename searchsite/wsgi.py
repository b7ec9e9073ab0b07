"""WSGI entry point, served by gunicorn under ``manage.py up``."""

import os

from django.core.wsgi import get_wsgi_application

from operations.private_files import private_umask

private_umask()  # a web server started without manage.py writes private files too
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "searchsite.settings.base")
application = get_wsgi_application()
