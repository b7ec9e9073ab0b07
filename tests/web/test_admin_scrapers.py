"""The built-in scrapers in the admin: listed on the Scrapers page, turned off per Page Options
profile, replaced by an admin scraper of the same name; and the Page Options nothing read
(``user_rank_bonus``, ``show_ip_address``) are gone."""

from __future__ import annotations

import pytest
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.urls import reverse

from crawler import selectors, services
from crawler.core.processing.builtin_scrapers import BUILTIN_NAMES, builtin_scraper
from crawler.core.processing.config import DEFAULT_INDEXING_PLUGINS, PageProcessingConfig
from crawler.core.processing.page import FetchedPage
from crawler.machines.fetching import processor_for
from crawler.models import PageOptions, Scraper
from tests.fixtures import cms_pages

from .forms import admin_change_data

pytestmark = pytest.mark.django_db


def scrapers_of(options: PageOptions):
    """The scrapers a crawl with this profile would use, as the fetchers build them."""
    data = selectors.page_options_snapshot(options)
    return PageProcessingConfig.from_options(selectors.crawl_time_options_from(data)).scrapers


def test_scrapers_page_lists_the_builtin_ones(admin_client):
    page = admin_client.get(reverse("admin:crawler_scraper_changelist")).content.decode()
    assert 'id="builtin-scrapers"' in page
    for name in BUILTIN_NAMES:
        assert f'data-name="{name}"' in page
    assert "mw-content-text" in page and "og:type" in page  # their paths are shown
    assert page.count("Copy to my scrapers") == len(BUILTIN_NAMES)
    assert "Your scrapers" in page


def test_every_profile_uses_the_builtin_ones_by_default(options):
    assert [s.name for s in scrapers_of(options)] == list(BUILTIN_NAMES)
    summary_only = PageOptions.objects.get(name="Summary only")
    assert [s.name for s in scrapers_of(summary_only)] == list(BUILTIN_NAMES)


def test_page_options_turn_one_off(admin_client, options):
    url = reverse("admin:crawler_pageoptions_change", args=[options.pk])
    form_page = admin_client.get(url).content.decode()
    assert "Built-in scrapers used" in form_page
    assert form_page.count('name="builtin_scrapers_used"') == len(BUILTIN_NAMES)
    data = admin_change_data(admin_client, url)
    assert data["builtin_scrapers_used"] == list(BUILTIN_NAMES)  # all ticked
    data["builtin_scrapers_used"] = [n for n in BUILTIN_NAMES if n != "WordPress"]
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    options.refresh_from_db()
    assert options.disabled_builtin_scrapers == ["WordPress"]
    assert "WordPress" not in {s.name for s in scrapers_of(options)}
    listing = admin_client.get(reverse("admin:crawler_scraper_changelist")).content.decode()
    assert f"{options.name} (turned off)" in listing
    # posting the form back unchanged keeps the choice
    assert admin_client.post(url, admin_change_data(admin_client, url)).status_code == 302
    options.refresh_from_db()
    assert options.disabled_builtin_scrapers == ["WordPress"]


def test_copy_to_my_scrapers_then_replace_in_a_profile(admin_client, options):
    copy_url = reverse("admin:crawler_scraper_copy_builtin")
    assert admin_client.get(copy_url).status_code == 405
    response = admin_client.post(copy_url, {"name": "WordPress"})
    row = Scraper.objects.get(name="WordPress")
    assert response.status_code == 302 and response.url.endswith(f"/{row.pk}/change/")
    builtin = builtin_scraper("WordPress")
    assert row.signature == builtin.signature and row.priority == builtin.priority
    assert row.delete_paths.splitlines() == list(builtin.delete_paths)
    row.full_clean()
    # a second copy of the same one is refused with a message
    again = admin_client.post(copy_url, {"name": "WordPress"}, follow=True).content.decode()
    assert "Not copied" in again and Scraper.objects.filter(name="WordPress").count() == 1
    assert "Not copied" in admin_client.post(copy_url, {"name": "Joomla"},
                                             follow=True).content.decode()
    # the operator changes the copy and chooses it in the profile: it replaces the built-in
    row.text_path = "//aside"
    row.meta_words = "media:=blog"
    row.save()
    options.scrapers.add(row)
    used = scrapers_of(options)
    assert [s.name for s in used].count("WordPress") == 1
    mine = next(s for s in used if s.name == "WordPress")
    assert mine.text_path == "//aside" and mine.meta_words == (("media", ":=blog"),)
    listing = admin_client.get(reverse("admin:crawler_scraper_changelist")).content.decode()
    assert f"{options.name} (replaced by WordPress)" in listing


def test_copy_needs_the_add_permission(client, django_user_model):
    from django.contrib.auth.models import Permission

    staff = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_scraper"))
    client.force_login(staff)
    page = client.get(reverse("admin:crawler_scraper_changelist")).content.decode()
    assert 'data-name="WordPress"' in page and "Copy to my scrapers" not in page
    assert client.post(reverse("admin:crawler_scraper_copy_builtin"),
                       {"name": "WordPress"}).status_code == 403
    assert not Scraper.objects.exists()


def test_validation_of_the_new_fields(options):
    options.disabled_builtin_scrapers = ["Joomla"]
    with pytest.raises(ValidationError) as info:
        options.full_clean()
    assert "disabled_builtin_scrapers" in info.value.message_dict
    scraper = Scraper(name="x", signature="//meta", meta_words="colour=//b")
    with pytest.raises(ValidationError) as info:
        scraper.full_clean()
    assert "meta_words" in info.value.message_dict
    Scraper(name="y", signature="//meta", meta_words="media:=video\nog=//meta/@content"
            ).full_clean()


def test_a_crawl_started_before_the_builtin_ones_keeps_running_without_them(make_crawl):
    crawl = make_crawl()
    snapshot = selectors.page_options_snapshot(crawl.page_options)
    del snapshot["disabled_builtin_scrapers"]
    crawl.page_options_snapshot = snapshot
    crawl.save()
    config = selectors.crawl_config_get(crawl.pk)
    assert set(config.page_options.disabled_builtin_scrapers) == set(BUILTIN_NAMES)
    assert PageProcessingConfig.from_options(config.page_options).scrapers == ()


def test_a_crawl_reads_wordpress_pages_with_the_builtin_scraper(make_crawl):

    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    cms = cms_pages.wordpress_page()
    page = processor_for(selectors.crawl_config_get(crawl.pk)).process(
        FetchedPage(cms.url, cms.html.encode(), 200, {"Content-Type": "text/html"}))
    assert page.scraper == "WordPress" and "scraper:wordpress" in page.meta_words


@pytest.mark.parametrize("name", ["user_rank_bonus", "show_ip_address"])
def test_options_nothing_read_are_gone(admin_client, options, name):
    with pytest.raises(FieldDoesNotExist):
        PageOptions._meta.get_field(name)
    assert name not in selectors.page_options_snapshot(options)
    url = reverse("admin:crawler_pageoptions_change", args=[options.pk])
    assert f'name="{name}"' not in admin_client.get(url).content.decode()


def test_indexing_plugins_setting(make_crawl, settings):

    config = selectors.crawl_config_get(make_crawl().pk)
    settings.INDEXING_PLUGINS = None  # unset: the engine's default plugins
    assert processor_for(config).config.indexing_plugins == DEFAULT_INDEXING_PLUGINS
    assert [p.name for p in processor_for(config).plugins] == ["api", "topic", "section"]
    settings.INDEXING_PLUGINS = ()  # empty: none
    assert processor_for(config).plugins == ()
    settings.INDEXING_PLUGINS = ("tests.fixtures.plugins.MarkerPlugin",)
    assert [p.name for p in processor_for(config).plugins] == ["marker"]
