"""Root URL configuration: the admin, Django's ``set_language`` (``/i18n/setlang/``), the search
page of the ranking app, the link-analysis
endpoints a queue server answers (the linkgraph app), the crawler's public page (``/bot``),
``/metrics`` (``searchsite.metrics``) and the site's icon."""

from django.conf import settings
from django.contrib import admin
from django.http import FileResponse, HttpRequest
from django.urls import include, path
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import cache_control

from .metrics import metrics

# the admin's header and title carry the site's name from the Appearance settings
# (templates/admin/base_site.html); the index page's title is translated
admin.site.index_title = gettext_lazy("Crawls, search index and machines")


@cache_control(max_age=86400, public=True)
def favicon(request: HttpRequest) -> FileResponse:
    """``/favicon.ico``, which browsers ask for on every site whatever the page links."""
    return FileResponse(open(settings.BASE_DIR / "static" / "favicon.ico", "rb"),
                        content_type="image/x-icon")


urlpatterns = [
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon),
    path("metrics", metrics),
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the footer's switch
    path("", include("ranking.urls")),
    path("", include("linkgraph.urls")),
    path("", include("crawler.urls")),
]
