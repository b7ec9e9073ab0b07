#!/usr/bin/env python
"""The whole test suite, as ``make test`` runs it.

1. Every test on the embedded defaults: SQLite and an embedded Redis that the tests start.
2. When TEST_POSTGRES_URL and TEST_REDIS_URL are set (CI sets them to this machine's PostgreSQL
   and Redis), the tests that touch the database or the broker (marked ``services`` by
   tests/conftest.py) run again on those services, so both deployments are covered.

tests/browser run when Debian's chromium and chromedriver are there, tests/cluster (the engine on
several machines in network namespaces, ``scripts/cluster_test.py``) when run as root with a
working ``ip netns`` (CI runs as root); the run says which it leaves out and why.

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


def have_netns() -> bool:
    """Root, and ``ip netns`` works: what tests/cluster (scripts/cluster_test.py) need."""
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("unshare") is None:
        return False
    return subprocess.run(["ip", "netns", "list"], capture_output=True).returncode == 0


def main() -> int:
    extra = sys.argv[1:]
    left_out = []
    if not have_browser():
        # tests/browser need Debian's chromium and chromium-driver (.ci/run installs them).
        print("chromium/chromedriver not found: tests/browser are not run "
              "(apt-get install chromium chromium-driver to run them)", flush=True)
        left_out.append("browser")
    if not have_netns():
        print("not root or no working `ip netns`: tests/cluster (the multi-machine test) are "
              "not run (as root: make test-cluster)", flush=True)
        left_out.append("cluster")
    given = list(extra)  # the caller's own arguments
    if left_out:
        extra = ["-m", " and ".join(f"not {m}" for m in left_out), *extra]
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    code = pytest([*extra], base_env)
    if code != 0:
        print(f"test run on SQLite and the embedded Redis failed (pytest exit {code})")
        return code or 1
    pg, redis = os.environ.get("TEST_POSTGRES_URL"), os.environ.get("TEST_REDIS_URL")
    if pg and redis:
        env = {**base_env, "DATABASE_URL": pg, "REDIS_URL": redis}
        code = pytest(["-m", "services and not browser and not cluster",
                       *given], env)
        if code != 0:
            print(f"test run on PostgreSQL and Redis failed (pytest exit {code})")
            return code or 1
    else:
        print("TEST_POSTGRES_URL/TEST_REDIS_URL not set: PostgreSQL and Redis run skipped "
              "(CI sets them).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
