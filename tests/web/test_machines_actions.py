"""The Machines page's fetcher pool section (issue 37, item 9), through the test client: the
pool's recent output from its log, the Restart button only for who may change crawls, a restart
asked as a request file for manage.py up's supervisor (which the integration test
tests/integration/foundation/test_machines_restart.py runs for real)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from operations.child_control import CONTROL_DIR, restart_pending, take_requests
from operations.child_logs import LOG_DIR, ChildLog

pytestmark = pytest.mark.django_db
PAGE = "admin:crawler_machine_changelist"


@pytest.fixture
def var(settings, tmp_path):
    settings.VAR_DIRECTORY = tmp_path
    return tmp_path


def test_the_page_shows_the_pool_output_escaped_and_the_newest_lines(admin_client, var):
    log = ChildLog(var / LOG_DIR, "fetchers")
    for n in range(100):
        log.write(f"[2026-11-29 11:00:{n % 60:02d}] line {n} <script>x</script>\n")
    log.close()
    page = admin_client.get(reverse(PAGE)).content.decode()
    assert "line 99 &lt;script&gt;" in page and "line 40 " in page and "line 39 " not in page
    assert "<script>x</script>" not in page
    data = admin_client.get(reverse("admin:crawler_machines_json")).json()
    assert len(data["pool_log"]) == 60 and data["pool_log"][-1].endswith(
        "line 99 <script>x</script>")


def test_without_output_the_page_says_so(admin_client, var):
    page = admin_client.get(reverse(PAGE)).content.decode()
    assert "No output yet" in page and 'id="restart-fetchers"' in page


def test_restart_is_a_request_for_the_supervisor(admin_client, var):
    restart = reverse("admin:crawler_machines_restart", args=["fetchers"])
    response = admin_client.post(restart)
    assert response.status_code == 302 and response["Location"] == reverse(PAGE)
    assert restart_pending(var / CONTROL_DIR, "fetchers")
    page = admin_client.get(reverse(PAGE)).content.decode()
    assert '<p id="restart-pending">' in page  # shown until the supervisor takes it
    assert take_requests(var / CONTROL_DIR, ["fetchers"]) == ["fetchers"]
    assert '<p id="restart-pending" hidden>' in admin_client.get(reverse(PAGE)).content.decode()
    for name in ("web", "..", "fetchers.log", "x" * 100):
        assert admin_client.post(reverse("admin:crawler_machines_restart",
                                          args=[name])).status_code == 404
    assert admin_client.get(restart).status_code == 405


def test_who_may_only_see_crawls_sees_the_output_but_cannot_restart(client, var):
    user = User.objects.create_user("viewer", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_crawl"))
    client.force_login(user)
    page = client.get(reverse(PAGE))
    assert page.status_code == 200 and b'id="restart-fetchers"' not in page.content
    restart = reverse("admin:crawler_machines_restart", args=["fetchers"])
    assert client.post(restart).status_code == 403
    assert not restart_pending(var / CONTROL_DIR, "fetchers")
