from django.urls import path

from . import api, views

app_name = "ranking"
urlpatterns = [
    path("", views.search, name="search"),
    path("cache", views.cache, name="cache"),
    path("cache/frame", views.cache_frame, name="cache-frame"),
    path("suggest", views.suggest, name="suggest"),
    path("similar", views.similar, name="similar"),
    path("opensearch.xml", views.opensearch, name="opensearch"),
    path("api/shard/search", api.shard_search, name="shard-search"),
    path("api/shard/summaries", api.shard_summaries, name="shard-summaries"),
]
