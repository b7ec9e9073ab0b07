"""News sources, the glue: the scheduled update of due feeds (:mod:`.updates`). The rows are
``crawler.models.news``, the admin ``crawler.admin.news``, the pure parts ``crawler.core.news``.
"""
