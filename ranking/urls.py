from django.urls import path

from . import api, views
from .agent import views as agent_views
from .searchpage import media, near_duplicates
from .searchpage import views as site_views
from .webmasters import llms_txt, site_status

app_name = "ranking"
urlpatterns = [
    path("", views.search, name="search"),
    path("cache", views.cache, name="cache"),
    path("cache/frame", views.cache_frame, name="cache-frame"),
    path("cache/image", media.cached_image, name="cache-image"),
    path("suggest", views.suggest, name="suggest"),
    path("similar", views.similar, name="similar"),
    path("near-duplicates", near_duplicates.near_duplicates, name="near-duplicates"),
    path("opensearch.xml", views.opensearch, name="opensearch"),
    path("settings", site_views.settings_page, name="settings"),
    path("site/logo", site_views.logo, name="logo"),
    path("site/appearance.css", site_views.appearance_css, name="appearance-css"),
    path("api/shard/search", api.shard_search, name="shard-search"),
    path("api/shard/summaries", api.shard_summaries, name="shard-summaries"),
    path("indexed", site_status.site_status, name="site-status"),
    path("llms/<str:host>/llms.txt", llms_txt.site_llms_txt, name="site-llms-txt"),
    path("api/agent/search", agent_views.search, name="agent-search"),
    path("api/agent/read", agent_views.read, name="agent-read"),
    path("api/agent/cached", agent_views.cached, name="agent-cached"),
    path("api/agent/context", agent_views.context, name="agent-context"),
]
