"""Public urls of the crawler app (see ``crawler.views``)."""

from django.urls import path

from . import views

urlpatterns = [
    path("bot", views.bot, name="bot"),
]
