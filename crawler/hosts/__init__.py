"""What a crawl did with its urls and hosts, and the operator's host overrides, in the database:
the queue server's bulk writes and trimming (:mod:`.activity`, run in the queue-server
process), the admin's reads (:mod:`.selectors`) and its override writes (:mod:`.services`, run
in the web processes). The rows are ``crawler.models.hosts``; the pages are
``crawler.admin.hosts``.
"""
