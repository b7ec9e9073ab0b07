"""Django management commands of the crawler app (``manage.py crawl``, ``run_queue_server``,
``export_warc``)."""
