"""The crawler's admin: crawls, seeds, Page Options and queue servers (:mod:`.crawls`), the
Scrapers page (:mod:`.scrapers`), the news sources (:mod:`.news`), the Machines page
(:mod:`.machines`), a crawl's url and host pages (:mod:`.hosts`), the Page Options "Test" tool
(:mod:`.page_testing`) and the url submissions of "Is my site indexed?" (:mod:`.submissions`).

Runs in the web processes. Django's admin autodiscovery imports this package; importing the
modules that register model admins here is what registers them.
"""

from . import crawls, machines, news, scrapers, submissions  # noqa: F401  (they register admins)
