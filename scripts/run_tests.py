#!/usr/bin/env python
"""The test suite, as ``make test`` (and ``make test-slow``) runs it.

``make test`` (no arguments), kept to about ten minutes on a two-core machine:

1. Every test on the embedded defaults: SQLite and an embedded Redis that the tests start,
   except the ``long`` ones (``make test-slow``) and tests/cluster (the engine on several machines in network namespaces, about a
   minute and a half: ``make test-cluster`` or ``make test-slow``), in ``TEST_WORKERS``
   pytest-xdist processes (default 2; 0 or 1: in this process), a test module per worker at
   a time (``--dist loadfile``: a module's fixtures are made once). Every test makes its own
   folders, databases, ports and embedded Redis, so two modules never share anything.
2. When TEST_POSTGRES_URL and TEST_REDIS_URL are set (CI sets them to this machine's PostgreSQL
   and Redis), the tests that touch the database or the broker (marked ``services`` by
   tests/conftest.py) run again on those services, one at a time (they share the one Redis
   database), so both deployments are covered; the ones
   marked ``slow`` (real processes killed and restarted, crawls through Celery workers: each
   has just run on the embedded defaults) only in ``make test-slow``.

``make test-slow`` (``--slow``): the checks left out above: tests/cluster; the ``long`` tests
(about a minute or more each on two cores: processes killed at random moments and restarted,
crawls through real processes with faults, the benchmarks' smoke tests), on the embedded
defaults; and the ``slow`` and ``long`` tests that touch the services on PostgreSQL and Redis
(when TEST_POSTGRES_URL and TEST_REDIS_URL are set).

tests/browser run when Debian's chromium and chromedriver are there, tests/cluster when run as
root with a working ``ip netns`` (CI runs as root); the run says which it leaves out and why.

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


def workers() -> list[str]:
    """The pytest-xdist arguments of the SQLite pass (``TEST_WORKERS``, default 2)."""
    raw = os.environ.get("TEST_WORKERS", "2").strip()
    try:
        count = int(raw)
    except ValueError:
        raise SystemExit(f"TEST_WORKERS must be a whole number, not {raw!r}") from None
    return ["-n", str(count), "--dist", "loadfile"] if count > 1 else []


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
    slow = "--slow" in extra
    extra = [arg for arg in extra if arg != "--slow"]
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
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    if slow:
        if "cluster" not in left_out:
            code = pytest(["tests/cluster", *extra], base_env)
            if code != 0:
                print(f"the multi-machine test failed (pytest exit {code})")
                return code or 1
        long_marks = " and ".join(["long", *(f"not {m}" for m in left_out)])
        code = pytest(["-m", long_marks, *workers(), *extra], base_env)
        if code != 0:
            print(f"the long tests failed on SQLite and the embedded Redis (pytest exit {code})")
            return code or 1
        return services_pass("services and (slow or long) and not browser and not cluster",
                             extra, base_env)
    marks = ["not cluster", "not long", *(f"not {m}" for m in left_out if m != "cluster")]
    code = pytest(["-m", " and ".join(marks), *workers(), *extra], base_env)
    if code != 0:
        print(f"test run on SQLite and the embedded Redis failed (pytest exit {code})")
        return code or 1
    print("left out (make test-slow): tests/cluster, the long tests, and the slow tests on "
          "PostgreSQL and Redis", flush=True)
    return services_pass("services and not slow and not long and not browser and not cluster",
                         extra, base_env)


def services_pass(marks: str, extra: list[str], base_env: dict[str, str]) -> int:
    """The tests ``marks`` selects on TEST_POSTGRES_URL and TEST_REDIS_URL, when both are
    set."""
    pg, redis = os.environ.get("TEST_POSTGRES_URL"), os.environ.get("TEST_REDIS_URL")
    if not (pg and redis):
        print("TEST_POSTGRES_URL/TEST_REDIS_URL not set: PostgreSQL and Redis run skipped "
              "(CI sets them).")
        return 0
    code = pytest(["-m", marks, *extra], {**base_env, "DATABASE_URL": pg, "REDIS_URL": redis})
    if code != 0:
        print(f"test run on PostgreSQL and Redis failed (pytest exit {code})")
        return code or 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
