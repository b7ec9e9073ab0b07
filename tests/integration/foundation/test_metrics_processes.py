"""``/metrics`` across the web server's processes (issue 19, item 8): with the environment
``manage.py up`` gives the web server (``web_metrics_env``), searches answered by two separate
processes are all counted in the histogram a third process exposes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from operations.management.commands.up import web_metrics_env

ROOT = Path(__file__).resolve().parents[3]
SEARCHES = """
import django
django.setup()
from django.test import Client
client = Client(HTTP_HOST="127.0.0.1")
for _ in range({n}):
    assert client.get("/", {{"q": "lighthouse", "f": "json"}}).status_code == 200
"""
SCRAPE = """
import django
django.setup()
from django.test import Client
print(Client(HTTP_HOST="127.0.0.1").get("/metrics").content.decode())
"""


def run(code: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_searches_of_every_web_process_are_counted(tmp_path):
    directory = tmp_path / "var" / "metrics-web"
    directory.mkdir(parents=True)
    (directory / "stale_from_a_previous_run.db").write_bytes(b"x")
    env = {**{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
           "DJANGO_SETTINGS_MODULE": "searchsite.settings.test",
           "VAR_DIRECTORY": str(tmp_path / "var"), "WORK_DIRECTORY": str(tmp_path / "work"),
           **web_metrics_env(directory)}
    assert not (directory / "stale_from_a_previous_run.db").exists()
    run(SEARCHES.format(n=2), env)
    run(SEARCHES.format(n=3), env)
    text = run(SCRAPE, env)
    counts = {tuple(sorted(s.labels.items())): s.value
              for family in text_string_to_metric_families(text) for s in family.samples
              if s.name == "yioopy_search_seconds_count"}
    assert counts[(("format", "json"),)] == 5
