"""The search page's own settings: what a reader keeps in a cookie (:mod:`.preferences`), what
the admin sets for the whole site (:mod:`.appearance`), their pages (:mod:`.views`) and the
translations of the search messages (:mod:`.messages`).

Layer: Django glue of the ``ranking`` app, beside :mod:`ranking.views` (which renders the search
page with them) and below nothing else of the app but its models and the search service.
"""
