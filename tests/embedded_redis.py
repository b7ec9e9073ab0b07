"""The embedded Redis of a machine run on embedded defaults, for tests: the settings a process of
the engine sees (loaded in a fresh process with a temporary VAR_DIRECTORY, as every process of
the engine loads them) and the server started from the argv ``manage.py up`` builds from them
(``operations.embedded_redis.embedded_redis_spec``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT, wait_for_redis_socket

SETTINGS_OF_A_PROCESS = """
import json, django
django.setup()
from django.conf import settings
from operations.embedded_redis import embedded_redis_spec
argv = settings.EMBEDDED_REDIS and list(embedded_redis_spec(
    settings.EMBEDDED_REDIS_SOCKET, settings.EMBEDDED_REDIS_PASSWORD).argv)
print(json.dumps({"argv": argv, "redis_url": settings.REDIS_URL,
                  "socket": str(settings.EMBEDDED_REDIS_SOCKET),
                  "password": settings.EMBEDDED_REDIS_PASSWORD,
                  "broker": settings.CELERY_BROKER_URL, "backend": settings.CELERY_RESULT_BACKEND,
                  "secret_key": settings.SECRET_KEY, "token": settings.QUEUE_SERVER_TOKEN}))
"""


def engine_env(var: Path, **extra: str) -> dict[str, str]:
    """The environment of an engine process on embedded defaults with ``var`` as
    VAR_DIRECTORY (no REDIS_URL, DATABASE_URL or secrets from the caller's environment)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "DATABASE_URL", "QUEUE_SERVER_TOKEN", "SECRET_KEY")}
    env.update({"VAR_DIRECTORY": str(var), "DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
                **extra})
    return env


def settings_of_a_process(var: Path, **extra: str) -> dict:
    """The settings a process of the engine sees with ``var`` as VAR_DIRECTORY, and the argv
    of the embedded Redis that ``manage.py up`` builds from them."""
    out = subprocess.run([sys.executable, "-c", SETTINGS_OF_A_PROCESS], cwd=ROOT,
                         env=engine_env(var, **extra), capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class Embedded:
    """A running embedded Redis: its VAR_DIRECTORY, the settings of a process of its engine
    (:func:`settings_of_a_process`) and the server process."""

    var: Path
    seen: dict
    proc: subprocess.Popen

    @property
    def socket(self) -> Path:
        return Path(self.seen["socket"])


@contextmanager
def running_embedded(var: Path, timeout: float = 20.0) -> Iterator[Embedded]:
    """Start the embedded Redis of VAR_DIRECTORY ``var`` as ``up`` does; stop it at the end."""
    seen = settings_of_a_process(var)
    proc = subprocess.Popen(seen["argv"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_redis_socket(Path(seen["socket"]), seen["password"], proc, timeout)
        yield Embedded(var, seen, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
