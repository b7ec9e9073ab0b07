"""Root URL configuration: the admin, the search page of the ranking app, the link-analysis
endpoints a queue server answers (the linkgraph app), the crawler's public page (``/bot``),
``/metrics`` (``searchsite.metrics``) and the site's icon."""

from django.conf import settings
from django.contrib import admin
from django.http import FileResponse, HttpRequest
from django.urls import include, path
from django.views.decorators.cache import cache_control

from .metrics import metrics

admin.site.site_header = "Yioopy administration"
admin.site.site_title = "Yioopy admin"
admin.site.index_title = "Crawls, search index and machines"


@cache_control(max_age=86400, public=True)
def favicon(request: HttpRequest) -> FileResponse:
    """``/favicon.ico``, which browsers ask for on every site whatever the page links."""
    return FileResponse(open(settings.BASE_DIR / "static" / "favicon.ico", "rb"),
                        content_type="image/x-icon")


urlpatterns = [
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon),
    path("metrics", metrics),
    path("", include("ranking.urls")),
    path("", include("linkgraph.urls")),
    path("", include("crawler.urls")),
]
