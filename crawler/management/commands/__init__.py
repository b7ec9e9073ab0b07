"""The crawler's ``manage.py`` commands: a crawl in one process, the queue-server process and
a WARC export."""
