"""Issue 18: generated query strings and parameter values at every public endpoint of the
search side never get a 5xx, and every answer is JSON, HTML or XML (RSS, OpenSearch) that a
client can read, with a message when it refuses. Fixed seed; the index is built in the test
(the fixture site of :mod:`tests.web.test_search_page`), so searches really run."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from urllib.parse import quote

import pytest

from indexer.core.shard_token import shard_bearer
from tests.web.test_search_page import ITS
from tests.web.test_search_page import site as site  # the fixtures, re-exported for pytest
from tests.web.test_search_page import work as work

SEED = 20261126
CASES = 2400
TOKEN = "fuzz-token"
WORDS = ("threading", "locks", "python", "queues", "fils", "hostile", "secret", "thread",
         "programming", "interpreter", "part", "the", "a")
META = ("i:", "index:", "site:", "m:", "mix:", "w:", "weight:", "raw:", "no:", "lang:", "safe:",
        "info:", "link:", "source:", "path:", "filetype:", "date:", "highlight:", "media:", "")
OTHER_DIGITS = ("²", "١٧٠٠٠٠٠٠٠٠", "１７", "٣", "⅕", "߁", "๑๒", "𝟙𝟚", "Ⅻ", "1_000", "1e9",
                "-1", "+5", "0x10", "99999999999999999999999999", "nan", "inf", " 7 ", "")
PARAMS = ("q", "f", "its", "s", "limit", "num", "safe", "lang", "nfpr", "url", "n", "heads",
          "server", "fmt", "ids", "token", "c", "a")
ENDPOINTS = ("/", "/?f=json", "/?f=rss", "/suggest", "/suggest?f=opensearch", "/cache",
             "/cache/frame", "/opensearch.xml", "/api/shard/search", "/api/shard/summaries")


def _unicode(rng: random.Random, n: int) -> str:
    """``n`` random characters: ASCII, controls, letters of other scripts, symbols and
    private-use ones (surrogates cannot be sent as text; see :func:`_raw_value`)."""
    ranges = ((0x00, 0x1F), (0x20, 0x7E), (0x7F, 0x9F), (0xA0, 0x24F), (0x370, 0x6FF),
              (0x900, 0xDFF), (0x2000, 0x2BFF), (0x3000, 0x30FF), (0x4E00, 0x9FFF),
              (0xE000, 0xF8FF), (0xFE00, 0xFFFF), (0x1F300, 0x1FAFF), (0x10000, 0x10FFFF))
    return "".join(chr(rng.randint(*rng.choice(ranges))) for _ in range(n))


def _value(rng: random.Random) -> str:
    kind = rng.randrange(12)
    if kind == 0:
        return _unicode(rng, rng.randint(0, 40))
    if kind == 1:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
    if kind == 2:
        return f"{rng.choice(WORDS)} {rng.choice(META)}{rng.choice(OTHER_DIGITS + WORDS)}"
    if kind == 3:
        return rng.choice(OTHER_DIGITS)
    if kind == 4:
        return rng.choice(WORDS) * rng.randint(100, 900)  # long: 300 to 9,900 characters
    if kind == 5:
        return rng.choice(('"', "-", "|", "*", '"*"', "- -", "||", '"a', "-\"x y\"", ":", "::",
                           "i:", "site:", "w:0", "w:-1", "w:1e309", "no:", "m:1", "lang:",
                           "info:javascript:alert(1)", "link:", "%", "&", "=", "#", "?"))
    if kind == 6:
        return rng.choice(("http://docs.example.test/threads/3.html", "javascript:alert(1)",
                           "http://evil.example.test/hostile.html", "data:,x", "//x", "http:",
                           "http://[::1", "http://private.example.test/secret.html",
                           "https://nowhere.test/" + "a" * rng.randint(0, 3000), "file:///etc"))
    if kind == 7:
        return rng.choice(("json", "rss", "html", "opensearch", "bin", "xml", "JSON", "", "j"))
    if kind == 8:
        return rng.choice((str(ITS), str(ITS + 1), "0", "-" + str(ITS), str(ITS) + "²"))
    if kind == 9:
        return f"{rng.choice(WORDS)}{_unicode(rng, 3)}{rng.choice(META)}{_unicode(rng, 2)}"
    if kind == 10:
        return "\x00" + rng.choice(WORDS) + "\x00"
    return str(rng.randint(-10 ** rng.randint(1, 25), 10 ** rng.randint(1, 25)))


def _raw_value(rng: random.Random) -> str:
    """A percent-encoded value as it may arrive: encoded text, or bytes that are not UTF-8
    (a surrogate's encoding, lone continuation bytes), ``%00`` or bad escapes."""
    kind = rng.randrange(5)
    if kind == 0:
        return quote(_value(rng), safe="")
    if kind == 1:
        return rng.choice(("%ED%A0%80", "%ED%BF%BF", "%F0%9F", "%80%81", "%C0%AF", "%FF%FE"))\
            + quote(rng.choice(WORDS))
    if kind == 2:
        return rng.choice(("%00", "%zz", "%", "%4", "%%", "%u0041", "%0", "%E2%82"))\
            + rng.choice(WORDS)
    if kind == 3:
        return "+".join(rng.choice(WORDS) for _ in range(3)) + "%00"
    return quote(rng.choice(WORDS)) + "&" * rng.randint(1, 3) + "=" * rng.randint(0, 2)


def _request(rng: random.Random) -> tuple[str, str, dict[str, str]]:
    """(endpoint, path with its raw query string, extra headers)."""
    endpoint = rng.choice(ENDPOINTS)
    pairs = []
    if rng.random() < 0.8:
        pairs.append(("q", _raw_value(rng) if rng.random() < 0.4 else quote(_value(rng))))
    for _ in range(rng.randint(0, 4)):  # repeated and odd parameters too
        name = rng.choice(PARAMS)
        pairs.append((name, _raw_value(rng) if rng.random() < 0.3 else quote(_value(rng))))
    headers = {}
    if endpoint.startswith("/api/") and rng.random() < 0.5:
        headers["HTTP_X_SHARD_TOKEN"] = shard_bearer(TOKEN) if rng.random() < 0.8 else _value(rng)[:40]
    query = "&".join(f"{k}={v}" for k, v in pairs)
    joiner = "&" if "?" in endpoint else "?"
    return endpoint, endpoint + (joiner + query if query else ""), headers


def _readable(endpoint: str, path: str, response) -> bool:
    """Checks the answer; True when it is a search answer with at least one result."""
    status = response.status_code
    assert status < 500, (path, status, response.content[:300])
    kind = response["Content-Type"].split(";")[0].strip()
    body = response.content
    if kind in ("application/json", "application/x-suggestions+json"):
        data = json.loads(body)
        if status >= 400:
            assert isinstance(data, dict) and data.get("error"), (path, data)
        return isinstance(data, dict) and bool(data.get("results"))
    elif kind == "text/html":
        text = body.decode("utf-8")
        assert "<html" in text.lower() or "<!doctype" in text.lower(), (path, text[:300])
        if status >= 400:
            assert 'role="alert"' in text or "<h1" in text.lower(), (path, text[:300])
    elif kind in ("application/rss+xml", "application/opensearchdescription+xml"):
        ET.fromstring(body)
    elif kind == "text/plain":  # the cache frame's answer when it has no copy
        assert endpoint == "/cache/frame" and status == 404 and body, (path, body[:300])
    else:
        assert kind == "application/octet-stream" and "fmt=bin" in path, (path, kind)
    return False


@pytest.mark.django_db(transaction=False)
def test_generated_requests_never_fail(client, site, settings):
    settings.QUEUE_SERVER_TOKEN = TOKEN
    rng = random.Random(SEED)
    seen = set()
    found = 0
    for _ in range(CASES):
        endpoint, path, headers = _request(rng)
        seen.add(endpoint)
        response = client.get(path, **headers)
        found += _readable(endpoint, path, response)
    assert seen == set(ENDPOINTS)
    assert found >= 20  # the searches really ran over the index
