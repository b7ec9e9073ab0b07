"""The search page's own settings: what a reader keeps in a cookie (:mod:`.preferences`), what
the admin sets for the whole site (:mod:`.appearance`), their pages (:mod:`.views`), the
translations of the search messages (:mod:`.messages`), the Images, Videos and News tabs
(:mod:`.media`) and the News tab's search of the news index (:mod:`.news`).

Layer: Django glue of the ``ranking`` app, beside :mod:`ranking.views` (which renders the search
page with them); they use the app's models, parameters, page helpers and search service,
never its views.
"""
