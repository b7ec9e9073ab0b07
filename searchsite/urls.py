"""Root URL configuration: the admin, and the search page of the ranking app."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("ranking.urls")),
]
