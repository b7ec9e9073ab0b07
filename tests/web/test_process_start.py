"""What a Django process loads as it starts: the web processes and management commands queue
the analysis worker's tasks by name (``crawler.sending``) and do not import the task module
(its Celery tasks, the queue server's inbox and the replay guard's Redis client)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from crawler import sending, tasks

ROOT = Path(__file__).resolve().parents[2]

LOADED = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "searchsite.settings.base")
import django
django.setup()
from django.contrib import admin
admin.autodiscover()
from django.urls import get_resolver
get_resolver().url_patterns
print(sorted(m for m in ("crawler.tasks", "crawler.machines.seen_envelopes")
             if m in sys.modules))
"""


def test_a_web_process_does_not_load_the_task_module(tmp_path):
    done = subprocess.run([sys.executable, "-c", LOADED], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "YIOOPY_VAR_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_names_sent_are_the_tasks_names():
    assert tasks.link_analysis_task.name == sending.LINK_ANALYSIS_TASK
    assert tasks.export_warc_task.name == sending.EXPORT_WARC_TASK
