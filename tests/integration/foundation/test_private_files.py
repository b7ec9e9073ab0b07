"""What the engine writes is private to its user (issue 34, item 2; operations.private_files):
the commands write their files 0600 and folders 0700 whatever umask they were started with,
the index, journal and lock files are created 0600 by the code that writes them, and
``manage.py up`` makes an existing install (a 0644 database, 0755 folders) private before it
starts anything, leaving symbolic links and their targets alone."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.core.scheduler.durable.journal import JournalWriter
from indexer.core.files.storage import atomic_write
from operations.instance_lock import InstanceLock
from operations.private_files import make_private
from tests.conftest import ROOT, sqlite_copy
from tests.integration.foundation.test_up_lifetime import Up, up_env


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def open_to_others(root: Path) -> list[str]:
    """Entries under ``root`` (itself included) that the group or others may use."""
    found = [] if mode(root) & 0o077 == 0 else [f"{root} {oct(mode(root))}"]
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if not path.is_symlink() and mode(path) & 0o077:
                found.append(f"{path} {oct(mode(path))}")
    return found


def test_a_command_on_a_fresh_install_writes_only_private_files(tmp_path):
    var = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "VAR_DIRECTORY": str(var)})
    done = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                          umask=0o022)  # as a login shell's umask leaves it
    assert done.returncode == 0, done.stderr
    assert mode(var) == 0o700
    assert mode(var / "db.sqlite3") == 0o600 and mode(var / "secret_key") == 0o600
    assert open_to_others(var) == []


def test_index_journal_and_lock_files_are_created_private_whatever_the_umask(tmp_path):
    before = os.umask(0o022)
    try:
        atomic_write(tmp_path / "partition.ix", b"index bytes")
        journal = JournalWriter(tmp_path / "queue.journal")
        journal.close()
        InstanceLock(tmp_path / "up.lock").release()
    finally:
        os.umask(before)
    for name in ("partition.ix", "queue.journal", "up.lock"):
        assert mode(tmp_path / name) == 0o600, name


def test_make_private_fixes_a_tree_and_leaves_links_alone(tmp_path):
    before = os.umask(0o022)
    try:
        var = tmp_path / "var"
        (var / "work" / "qs0" / "IndexData1").mkdir(parents=True)
        (var / "work" / "qs0" / "IndexData1" / "doc_map").write_bytes(b"x")
        (var / "db.sqlite3").write_bytes(b"x")
        script = var / "tool"
        script.write_bytes(b"#!/bin/sh\n")
        script.chmod(0o755)
        outside = tmp_path / "shared.txt"
        outside.write_bytes(b"not the engine's")
        (var / "link").symlink_to(outside)
    finally:
        os.umask(before)
    report = make_private([var, var / "work"])  # a folder inside another is walked once
    assert report.changed == 7 and report.failed == ()
    assert open_to_others(var) == []
    assert mode(var / "db.sqlite3") == 0o600 and mode(script) == 0o700
    assert mode(outside) == 0o644  # a link's target is not the engine's
    assert make_private([var]).changed == 0


@pytest.mark.slow
def test_up_makes_an_existing_install_private_before_it_starts(tmp_path, migrated_sqlite):
    env = up_env(tmp_path, migrated_sqlite)
    var = Path(env["VAR_DIRECTORY"])
    before = os.umask(0o022)
    try:  # an install made before: 0644 database and pages, 0755 folders
        env["DATABASE_URL"] = sqlite_copy(migrated_sqlite, var)
        (var / "db.sqlite3").chmod(0o644)
        pages = var / "work" / "qs0" / "IndexData1700000000" / "documents"
        pages.mkdir(parents=True)
        (pages / "partition_0.txt.gz").write_bytes(b"crawled pages")
        (var / "work" / "inbox").mkdir()
        (var / "work" / "inbox" / "batch-1").write_bytes(b"a batch")
    finally:
        os.umask(before)
    assert open_to_others(var)
    up = Up(tmp_path, env)
    try:
        # every child started: redis (its data), the web server, the workers, queue server 0
        up.wait_for(lambda text: "started analysis" in text and "started qs0" in text
                    and "started fetchers" in text, "the workers", timeout=120)
        assert "files and folders private" in up.text()
        assert mode(var / "db.sqlite3") == 0o600 and mode(var) == 0o700
        assert open_to_others(var) == []  # and what up made since it started
    finally:
        up.close()
