"""Root URL configuration: the admin, the search page of the ranking app, and the link-analysis
endpoints a queue server answers (the linkgraph app)."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("ranking.urls")),
    path("", include("linkgraph.urls")),
]
