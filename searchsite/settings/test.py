"""Test settings: the base settings with fast password hashing and a private var directory."""

import os

from .base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests crawl fixture sites on loopback only.
CRAWLER_ALLOWED_NETWORKS = ("127.0.0.0/8", "::1/128")
# Each test's database rolls back without signals: read the search options every time.
SEARCH_OPTIONS_TTL = 0.0
# Tests search from one address many times a minute and check what is logged: the per-client
# bound of the query log is off (its own test turns it on).
QUERY_LOG_PER_CLIENT_PER_MINUTE = 0
LOGGING["root"]["level"] = "WARNING"  # noqa: F405

# A file, not an in-memory database, for SQLite test runs: the browser tests' live server
# answers from its own threads, and an in-memory database shared across threads breaks when a
# late request arrives after a test's teardown. One file per test process, so that two test
# runs in one checkout (two developers' terminals, a watcher) never share a database.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": str(VAR_DIRECTORY / f"test-db-{os.getpid()}.sqlite3")}  # noqa: F405
# The live server's request threads come and go: they close their connections as each
# request ends rather than leaving them to the thread's end.
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
