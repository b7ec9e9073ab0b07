"""Model permissions on the admin's own crawl pages and buttons (issue 18, item 2): a staff user
needs view_crawl for a crawl's status pages, change_crawl for its actions and the link-analysis
button, change_pageoptions for the Page Options test (which fetches urls); without them the
answer is 403, never 500. An action's ``next`` redirect stays on the site."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from crawler.models import Crawl

pytestmark = pytest.mark.django_db


def staff_client(client, django_user_model, *codenames):
    user = django_user_model.objects.create_user("staff", password="pw-staff-1", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client.force_login(user)
    client.raise_request_exception = False  # a 500 is an answer to assert on, not a crash
    return client


def view_urls(crawl):
    return [reverse("admin:crawler_crawl_status", args=[crawl.pk]),
            reverse("admin:crawler_crawl_status_json", args=[crawl.pk]),
            reverse("admin:crawler_crawl_needy", args=[crawl.pk]),
            reverse("admin:crawler_machines")]


def action_urls(crawl):
    return [*(reverse("admin:crawler_crawl_action", args=[crawl.pk, verb])
              for verb in ("start", "stop", "resume", "close")),
            reverse("admin:crawler_crawl_link_analysis", args=[crawl.pk])]


def test_staff_without_permissions_gets_403_everywhere(client, django_user_model, make_crawl,
                                                       options):
    crawl = make_crawl()
    c = staff_client(client, django_user_model)
    for url in view_urls(crawl):
        assert c.get(url).status_code == 403, url
    for url in action_urls(crawl):
        assert c.post(url).status_code == 403, url
    test_url = reverse("admin:crawler_pageoptions_test", args=[options.pk])
    assert c.get(test_url).status_code == 403
    assert c.post(test_url, {"source": "paste", "page": "<p>x</p>"}).status_code == 403
    assert Crawl.objects.get(pk=crawl.pk).status == crawl.status


def test_view_permission_opens_status_pages_but_not_actions(client, django_user_model,
                                                            make_crawl, options):
    crawl = make_crawl(restrict_to_seeds=True)  # Start asks nothing of a restricted crawl
    c = staff_client(client, django_user_model, "view_crawl", "view_pageoptions")
    for url in view_urls(crawl):
        assert c.get(url).status_code == 200, url
    page = c.get(view_urls(crawl)[0]).content.decode()  # no buttons it may not use
    assert 'name="crawl-start"' not in page and 'name="link-analysis-run"' not in page
    change = c.get(reverse("admin:crawler_crawl_change", args=[crawl.pk])).content.decode()
    assert 'name="crawl-start"' not in change
    for url in action_urls(crawl):
        assert c.post(url).status_code == 403, url
    assert Crawl.objects.get(pk=crawl.pk).status == "new"
    assert c.get(reverse("admin:crawler_pageoptions_test",
                         args=[options.pk])).status_code == 403


def test_change_permissions_run_actions_and_the_page_test(client, django_user_model,
                                                          make_crawl, options):
    crawl = make_crawl(restrict_to_seeds=True)  # Start asks nothing of a restricted crawl
    c = staff_client(client, django_user_model, "view_crawl", "change_crawl",
                     "change_pageoptions")
    page = c.get(view_urls(crawl)[0]).content.decode()
    assert 'name="crawl-start"' in page and 'name="link-analysis-run"' in page
    start = reverse("admin:crawler_crawl_action", args=[crawl.pk, "start"])
    response = c.post(start)
    assert response.status_code == 302
    assert Crawl.objects.get(pk=crawl.pk).status == "running"
    test_url = reverse("admin:crawler_pageoptions_test", args=[options.pk])
    assert c.get(test_url).status_code == 200


@pytest.mark.parametrize("target,kept", [
    ("/admin/crawler/crawl/", True),
    ("https://evil.example/", False),
    ("//evil.example/admin/", False),
    ("http://testserver.evil.example/", False),
    ("javascript:alert(1)", False),
])
def test_action_next_only_redirects_within_the_site(admin_client, make_crawl, target, kept):
    crawl = make_crawl(restrict_to_seeds=True)  # Start asks nothing of a restricted crawl
    response = admin_client.post(reverse("admin:crawler_crawl_action", args=[crawl.pk, "start"]),
                                 {"next": target})
    status_url = reverse("admin:crawler_crawl_status", args=[crawl.pk])
    assert response.status_code == 302
    assert response["Location"] == (target if kept else status_url)
