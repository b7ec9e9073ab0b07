"""Settings a fetcher cannot work with stop the engine at start-up with an error naming the
setting (issue 39, item 2): a typo in ``CRAWLER_CA_BUNDLE`` used to leave a crawl at 0 pages
and 0 errors while its fetchers failed on every https url."""

import os
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from tests.conftest import ROOT


@pytest.mark.parametrize(("content", "reason"), [
    (None, "no such file or folder"),
    (b"not a certificate\n", "not a readable PEM file"),
])
def test_a_bad_ca_bundle_fails_the_checks(settings, tmp_path, content, reason):
    path = tmp_path / "ca.pem"
    if content is not None:
        path.write_bytes(content)
    settings.CRAWLER_CA_BUNDLE = str(path)
    with pytest.raises(SystemCheckError, match=f"CRAWLER_CA_BUNDLE={path}: {reason}"):
        call_command("check")


def test_the_systems_bundle_passes(settings):
    settings.CRAWLER_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
    call_command("check")
    settings.CRAWLER_CA_BUNDLE = None
    call_command("check")


def test_up_stops_at_once_naming_the_setting(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update({"VAR_DIRECTORY": str(tmp_path / "var"), "CRAWLER_CA_BUNDLE": "/etc/ssl/typo.pem",
                "DJANGO_SETTINGS_MODULE": "searchsite.settings.base"})
    done = subprocess.run([sys.executable, "manage.py", "up"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "CRAWLER_CA_BUNDLE=/etc/ssl/typo.pem: no such file or folder" in out
    assert "Traceback" not in out and "all processes are up" not in out
