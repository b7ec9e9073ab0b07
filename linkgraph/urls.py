"""The link-analysis endpoints a queue server answers (see :mod:`linkgraph.views`)."""

from django.urls import path

from . import views

app_name = "linkgraph"
urlpatterns = [
    path("api/shard/links", views.shard_links, name="shard-links"),
    path("api/shard/scores", views.shard_scores, name="shard-scores"),
]
