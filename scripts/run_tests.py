#!/usr/bin/env python
"""The whole test suite, as ``make test`` runs it.

1. Every test on the embedded defaults: SQLite and an embedded Redis that the tests start.
2. When TEST_POSTGRES_URL and TEST_REDIS_URL are set (CI sets them to this machine's PostgreSQL
   and Redis), the tests that touch the database or the broker (marked ``services`` by
   tests/conftest.py) run again on those services, so both deployments are covered.

Any pytest exit code other than 0 fails the run, including 5 ("no tests collected").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pytest(args: list[str], env: dict[str, str]) -> int:
    command = [sys.executable, "-m", "pytest", *args]
    print("+", " ".join(command), flush=True)
    return subprocess.call(command, cwd=ROOT, env=env)


def have_browser() -> bool:
    return all(shutil.which(name) or os.path.exists(f"/usr/bin/{name}")
               for name in ("chromium", "chromedriver"))


def main() -> int:
    extra = sys.argv[1:]
    if not have_browser():
        # tests/browser need Debian's chromium and chromium-driver (.ci/run installs them).
        print("chromium/chromedriver not found: tests/browser are not run "
              "(apt-get install chromium chromium-driver to run them)", flush=True)
        extra = ["-m", "not browser", *extra]
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    code = pytest([*extra], base_env)
    if code != 0:
        print(f"test run on SQLite and the embedded Redis failed (pytest exit {code})")
        return code or 1
    pg, redis = os.environ.get("TEST_POSTGRES_URL"), os.environ.get("TEST_REDIS_URL")
    if pg and redis:
        env = {**base_env, "DATABASE_URL": pg, "REDIS_URL": redis}
        code = pytest(["-m", "services and not browser",
                       *[a for a in extra if a not in ("-m", "not browser")]], env)
        if code != 0:
            print(f"test run on PostgreSQL and Redis failed (pytest exit {code})")
            return code or 1
    else:
        print("TEST_POSTGRES_URL/TEST_REDIS_URL not set: PostgreSQL and Redis run skipped "
              "(CI sets them).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
