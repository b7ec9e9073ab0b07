"""The page the crawler's user agent names (issue 19, item 4), the favicon and the admin's
branding (item 9), through the test client."""

from __future__ import annotations

import pytest
from django.urls import reverse

from crawler.core.scheduler.config import MAXIMUM_CRAWL_DELAY

# the pages carry the site's name and logo from the Appearance settings (issue 37): a database
# read
pytestmark = pytest.mark.django_db


def test_the_user_agent_names_the_bot_page_which_explains_the_crawler(client, settings):
    assert settings.CRAWLER_USER_AGENT.endswith(f"(+{settings.CRAWLER_BOT_URL})")
    path = "/" + settings.CRAWLER_BOT_URL.split("/", 3)[3]
    response = client.get(path)
    assert response.status_code == 200 and response["X-Robots-Tag"] == "noindex"
    page = response.content.decode()
    assert "YioopyBot: the crawler of this search engine" in page
    assert settings.CRAWLER_USER_AGENT in page
    assert "User-agent: YioopyBot" in page and "Crawl-delay" in page
    assert f"over {MAXIMUM_CRAWL_DELAY:g} seconds" in page
    assert "noarchive" in page and "has not published a contact address" in page


@pytest.mark.parametrize(("contact", "href"), [
    ("crawler-ops@example.org", "mailto:crawler-ops@example.org"),
    ("https://example.org/contact", "https://example.org/contact")])
def test_the_bot_page_shows_the_operators_contact(client, settings, contact, href):
    settings.CRAWLER_CONTACT = contact
    page = client.get("/bot").content.decode()
    assert f'href="{href}" id="contact"' in page


def test_a_renamed_crawler_is_named_on_its_page(client, settings):
    settings.CRAWLER_USER_AGENT = "AcmeSearch/2.0 (+https://search.acme.example/bot)"
    page = client.get("/bot").content.decode()
    assert "AcmeSearch: the crawler" in page and "User-agent: AcmeSearch" in page


def test_the_bot_page_says_how_often_robots_txt_is_tried(client):
    """A slotted dataclass's field read from the class is its descriptor, which the page
    printed as "<member 'robots_retries' of 'SchedulerConfig' objects>" (issue 39, item 6)."""
    page = client.get("/bot").content.decode()
    assert "after 3 tries" in page and "<member" not in page


def test_favicon_is_served(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert body[:4] == b"\x00\x00\x01\x00"  # an ICO header


@pytest.mark.django_db
def test_the_admin_carries_the_engines_name(admin_client):
    page = admin_client.get(reverse("admin:index")).content.decode()
    assert "Yioopy administration" in page and "Django administration" not in page
    assert "<title>" in page and "Yioopy" in page.split("<title>")[1].split("</title>")[0]
