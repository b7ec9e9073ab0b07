"""Deployment settings (issue 18, item 3): the variables the README "Production" section lists
make ``check --deploy`` pass with no issues, the embedded defaults stay usable on plain-http
localhost, and admin pages carry a Content-Security-Policy."""

import os
import re
import secrets
import subprocess
import sys

import pytest
import redis
from django.conf import settings
from kombu import Connection

from tests.conftest import ROOT

MARKER = "<!-- production-env:"


def documented_production_env() -> dict[str, str]:
    """The ``NAME=value`` lines of the README's production block."""
    text = (ROOT / "README.md").read_text()
    block = re.search(re.escape(MARKER) + r".*?```sh\n(.*?)```", text, re.S)
    assert block, "README.md has no production-env block"
    pairs = dict(line.split("=", 1) for line in block.group(1).splitlines() if "=" in line)
    assert pairs["SECRET_KEY"].startswith("<")  # a placeholder: each deployment makes its own
    pairs["SECRET_KEY"] = secrets.token_urlsafe(50)
    return pairs


def check_deploy(tmp_path, extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "DATABASE_URL", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS")}
    env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
                "VAR_DIRECTORY": str(tmp_path / "var"), **extra})
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level",
                           "WARNING"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_check_deploy_passes_with_the_documented_variables(tmp_path):
    result = check_deploy(tmp_path, documented_production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout + result.stderr


def test_the_documented_redis_asks_for_a_password_over_verified_tls():
    url = documented_production_env()["REDIS_URL"]
    pool = redis.ConnectionPool.from_url(url)  # as the cache and the replay guard read it
    assert pool.connection_class is redis.SSLConnection
    assert pool.connection_kwargs["password"] and pool.connection_kwargs["ssl_cert_reqs"]
    broker = Connection(url)  # as Celery reads it (no connection is made)
    assert broker.transport_cls == "rediss" and broker.password


def test_check_deploy_warns_on_the_local_defaults(tmp_path):
    result = check_deploy(tmp_path, {})
    assert result.returncode != 0
    for code in ("W004", "W008", "W012", "W016"):
        assert f"security.{code}" in result.stderr
    assert "yioopy.W001" in result.stderr  # /metrics without a token


def test_local_defaults_keep_plain_http_working():
    assert not settings.SESSION_COOKIE_SECURE and not settings.CSRF_COOKIE_SECURE
    assert not settings.SECURE_SSL_REDIRECT and settings.SECURE_HSTS_SECONDS == 0
    assert getattr(settings, "SECURE_PROXY_SSL_HEADER", None) is None


@pytest.mark.django_db
def test_admin_pages_carry_a_content_security_policy(client, admin_client):
    policy = client.get("/admin/login/").headers.get("Content-Security-Policy", "")
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "script-src 'self'" in policy and "'unsafe-eval'" not in policy
    assert "Content-Security-Policy" in admin_client.get("/admin/crawler/crawl/").headers
    assert "Content-Security-Policy" not in client.get("/static/ranking/search.js").headers
