"""The operator at a browser: logs in to the admin of the ``web`` machine over HTTP, adds a
crawl with its seed sites through the admin's add form (every field posted back as the form
had it, with the CSRF token), presses Start, and reads the crawl's ``status.json``."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import requests


class FormReader(HTMLParser):
    """The values a browser would post from the form with id ``form_id``: text inputs and
    hidden ones, ticked boxes, each select's selected (else first) option, textareas."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id, self.inside = form_id, False
        self.values: dict[str, str] = {}
        self._select: str | None = None
        self._first: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside or not a.get("name") and tag != "option":
            return
        if tag == "input":
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.values[a["name"]] = a.get("value", "on")
            elif kind not in ("submit", "button", "file", "image"):
                self.values[a["name"]] = a.get("value", "")
        elif tag == "select":
            self._select, self._first = a["name"], None
        elif tag == "option" and self._select:
            if self._first is None:
                self._first = a.get("value", "")
                self.values.setdefault(self._select, self._first)
            if "selected" in a:
                self.values[self._select] = a.get("value", "")
        elif tag == "textarea":
            self._textarea = a["name"]
            self.values[a["name"]] = ""

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.values[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            if self._textarea:
                self.values[self._textarea] = self.values[self._textarea].lstrip("\n")
            self._textarea = None
        elif tag == "form":
            self.inside = False


class Admin:
    def __init__(self, base: str, username: str, password: str) -> None:
        self.base = base.rstrip("/")
        self.session = requests.Session()
        self.login(username, password)

    def _post(self, path: str, data: dict[str, str], referer: str) -> requests.Response:
        data = {**data, "csrfmiddlewaretoken": self.session.cookies["csrftoken"]}
        return self.session.post(self.base + path, data=data, headers={"Referer": referer},
                                 timeout=60)

    def login(self, username: str, password: str) -> None:
        page = self.session.get(f"{self.base}/admin/login/", timeout=60)
        page.raise_for_status()
        done = self._post("/admin/login/?next=/admin/", {
            "username": username, "password": password, "next": "/admin/"}, page.url)
        if done.status_code != 200 or "logout" not in done.text.lower():
            raise RuntimeError(f"admin login failed ({done.status_code})")

    def add_crawl(self, name: str, seeds: list[str]) -> int:
        """Add a crawl through the admin's add form; its id."""
        url = f"{self.base}/admin/crawler/crawl/add/"
        page = self.session.get(url, timeout=60)
        page.raise_for_status()
        form = FormReader("crawl_form")
        form.feed(page.text)
        data = {**form.values, "name": name, "bulk_seeds": "\n".join(seeds), "_save": "Save"}
        # the cluster's crawl follows links across its sites without a page limit, not the
        # new-crawl form's safer defaults (restricted to the seeds' sites, a page limit)
        data.pop("restrict_to_seeds", None)
        data["max_pages"] = "0"
        done = self._post("/admin/crawler/crawl/add/", data, url)
        found = [int(n) for n in re.findall(r"/admin/crawler/crawl/(\d+)/change/", done.text)]
        if done.status_code != 200 or "errornote" in done.text or not found:
            errors = re.findall(r'class="errorlist[^"]*"[^>]*>(.*?)</ul>', done.text, re.S)
            raise RuntimeError(f"adding the crawl failed ({done.status_code}): {errors}")
        return max(found)

    def start(self, crawl_id: int) -> str:
        """Press Start on the crawl's status page; the admin's message."""
        status_page = f"{self.base}/admin/crawler/crawl/{crawl_id}/status/"
        self.session.get(status_page, timeout=60).raise_for_status()
        # an open-ended crawl's Start asks to confirm: this is the confirmation's post
        done = self._post(f"/admin/crawler/crawl/{crawl_id}/do/start/", {"confirm": "open-web"},
                          status_page)
        messages = re.findall(r'<li class="(?:success|error|info)">(.*?)</li>', done.text, re.S)
        if done.status_code != 200 or not any("start done" in m for m in messages):
            raise RuntimeError(f"Start failed ({done.status_code}): {messages}")
        return messages[0]

    def status(self, crawl_id: int) -> dict:
        got = self.session.get(f"{self.base}/admin/crawler/crawl/{crawl_id}/status.json",
                               timeout=60)
        got.raise_for_status()
        return got.json()

    def search(self, query: str, its: int | None = None, num: int = 50,
               explain: bool = False) -> dict:
        params = {"q": query, "f": "json", "num": str(num)}
        if explain:
            params["explain"] = "1"
        if its is not None:
            params["its"] = str(its)
        got = requests.get(self.base + "/", params=params, timeout=60)
        got.raise_for_status()
        return got.json()
