"""The admin's Appearance settings (issue 37): the site's name, logo, colours and footer links,
used by the search page, the settings page, the OpenSearch description, the RSS results and the
admin's header; invalid input is a form error, never a server error. Through the test
client."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from ranking.models import Appearance
from ranking.search_service import search_service
from tests.web.dated_site import build_dated_index

pytestmark = pytest.mark.django_db
OS = "{http://a9.com/-/spec/opensearch/1.1/}"
CHANGE = "/admin/ranking/appearance/1/change/"


def png(width: int = 4, height: int = 2) -> bytes:
    """A real PNG image (red pixels), made by hand: signature, IHDR, IDAT, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                              0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def form(**changes) -> dict:
    data = {"site_name": "Harbour Search", "accent_color": "#7a1f5c",
            "link_color": "#0b57d0", "header_color": "#fff7e6",
            "footer_links": "About us | /about\nPrivacy | https://example.org/privacy"}
    data.update(changes)
    return data


@pytest.fixture
def dated(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    build_dated_index(tmp_path)
    yield tmp_path
    search_service().pool.close()


def test_the_list_is_the_one_row_which_cannot_be_added_or_deleted(admin_client):
    response = admin_client.get(reverse("admin:ranking_appearance_changelist"))
    assert response.status_code == 302 and response["Location"] == CHANGE
    assert admin_client.get(CHANGE).status_code == 200
    assert admin_client.get("/admin/ranking/appearance/add/").status_code == 403
    assert admin_client.post("/admin/ranking/appearance/1/delete/").status_code == 403
    assert Appearance.objects.count() == 1


def test_saved_appearance_reaches_every_page(admin_client, client, dated):
    logo = png()
    response = admin_client.post(CHANGE, form(logo_file=SimpleUploadedFile(
        "logo.png", logo, content_type="image/png")))
    assert response.status_code == 302, response.content.decode()[-3000:]
    html = client.get("/", {"q": "lighthouse"}).content.decode()
    assert '<span class="name">Harbour Search</span>' in html
    assert "<title>lighthouse - Harbour Search search</title>" in html
    assert 'class="logo" src="/site/logo?v=' in html
    assert '<a href="/about" class="footer-link">About us</a>' in html
    assert '<a href="https://example.org/privacy" class="footer-link">Privacy</a>' in html
    assert "Yioopy" not in html
    served = client.get("/site/logo")
    assert served.status_code == 200 and served.content == logo
    assert served["Content-Type"] == "image/png" and served["X-Content-Type-Options"] == "nosniff"
    css = client.get("/site/appearance.css").content.decode()
    assert "--site-accent: #7a1f5c" in css and "--site-head-bg: #fff7e6" in css
    assert "--site-link: #0b57d0" in css
    description = ET.fromstring(client.get("/opensearch.xml").content)
    assert description.find(f"{OS}ShortName").text == "Harbour Search"
    assert "Harbour Search" in description.find(f"{OS}Description").text
    assert description.find(f"{OS}Image").text.startswith("http://testserver/site/logo?v=")
    feed = ET.fromstring(client.get("/", {"q": "lighthouse", "f": "rss"}).content)
    assert feed.find("channel/title").text == "Harbour Search: lighthouse"
    assert "Harbour Search" in client.get("/settings").content.decode()
    admin_page = admin_client.get("/admin/").content.decode()
    assert "Harbour Search administration" in admin_page and "Yioopy" not in admin_page
    assert "| Harbour Search admin</title>" in admin_page
    assert "/site/appearance.css" not in admin_page  # the admin keeps its own colours


def test_long_name_is_cut_for_opensearch_and_logo_can_be_removed(admin_client, client):
    admin_client.post(CHANGE, form(site_name="The Harbour Intranet Search Engine",
                                   logo_file=SimpleUploadedFile("l.png", png())))
    short = ET.fromstring(client.get("/opensearch.xml").content).find(f"{OS}ShortName").text
    assert short == "The Harbour Intr"
    assert admin_client.post(CHANGE, form(remove_logo="on")).status_code == 302
    assert client.get("/site/logo").status_code == 404
    assert 'class="logo"' not in client.get("/").content.decode()
    assert ET.fromstring(client.get("/opensearch.xml").content).find(f"{OS}Image") is None


def test_defaults_before_anything_is_saved(client):
    html = client.get("/").content.decode()
    assert '<span class="name">Yioopy</span>' in html and 'class="logo"' not in html
    assert client.get("/site/logo").status_code == 404
    assert "--site-accent: #0b57d0" in client.get("/site/appearance.css").content.decode()


@pytest.mark.parametrize("changes, field, says", [
    ({"site_name": "   "}, "site_name", "This field is required"),
    ({"accent_color": "red"}, "accent_color", "#rrggbb"),
    ({"accent_color": "#ffff00"}, "accent_color", "Too little contrast"),
    ({"link_color": "#eeeeee"}, "link_color", "Too little contrast"),
    ({"header_color": "#000000"}, "header_color", "Too little contrast"),
    ({"header_color": "#12345"}, "header_color", "#rrggbb"),
    ({"footer_links": "About us /about"}, "footer_links", "line 1"),
    ({"footer_links": "Ok | /ok\nEvil | javascript:alert(1)"}, "footer_links", "line 2"),
    ({"footer_links": 'X | https://a.example/"onmouseover="x'}, "footer_links", "line 1"),
    ({"footer_links": "\n".join(f"L{i} | /p{i}" for i in range(13))}, "footer_links",
     "at most 12"),
    ({"site_name": "x" * 41}, "site_name", "at most 40"),
    ({"logo_file": b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"},
     "logo_file", "PNG, JPEG or GIF"),
    ({"logo_file": png() + b"\x00" * (256 * 1024)}, "logo_file", "larger than 256 KB"),
])
def test_invalid_input_is_a_form_error(admin_client, client, changes, field, says):
    if "logo_file" in changes:
        changes["logo_file"] = SimpleUploadedFile("logo.bin", changes["logo_file"])
    response = admin_client.post(CHANGE, form(**changes))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors and says in " ".join(errors[field]), errors
    assert '<span class="name">Yioopy</span>' in client.get("/").content.decode()


def test_no_template_names_the_engine():
    """The site's name comes from the Appearance settings, never from a template."""
    templates = Path(settings.BASE_DIR) / "templates"
    named = [str(p) for p in templates.rglob("*.html") if "Yioopy" in p.read_text()]
    assert not named
