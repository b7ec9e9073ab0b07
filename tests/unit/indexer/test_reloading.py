"""The one reloading-file cache (indexer.core.runtime.reloading): a file is loaded once per
version (inode, mtime, ctime, size), never while it is missing, and a failed version is
reported once."""

from __future__ import annotations

import os
import threading

import pytest

from indexer.core.runtime.reloading import ReloadingFile, SharedPerPath, file_stamp


class Counting:
    """A loader that reads the file's text and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, path):
        self.calls += 1
        text = path.read_text()
        if text == "bad":
            raise ValueError("bad file")
        if text == "boom":
            raise RuntimeError("not one of the expected errors")
        return text


def test_loads_once_per_version_and_not_while_missing(tmp_path):
    path = tmp_path / "f.txt"
    load = Counting()
    cache = ReloadingFile(path, load, errors=(ValueError,))
    assert cache.get() is None and cache.get() is None and load.calls == 0
    path.write_text("one")
    assert cache.get() == "one" and cache.get() == "one" and load.calls == 1
    path.write_text("two")
    os.utime(path, ns=(7, 7))  # a new version even within the clock's resolution
    assert cache.get() == "two" and load.calls == 2
    assert cache.get() == "two" and load.calls == 2  # unchanged: not loaded again
    path.unlink()
    assert cache.get() is None and load.calls == 2


def test_a_rename_over_the_file_is_a_new_version(tmp_path):
    path, fresh = tmp_path / "f.txt", tmp_path / "f.new"
    path.write_text("aaa")
    os.utime(path, ns=(5, 5))
    load = Counting()
    cache = ReloadingFile(path, load)
    assert cache.get() == "aaa"
    fresh.write_text("bbb")  # the same size and mtime: only the inode (and ctime) differ
    os.utime(fresh, ns=(5, 5))
    os.replace(fresh, path)
    assert cache.get() == "bbb" and load.calls == 2


def test_a_failed_version_is_reported_once_and_retried_when_the_file_changes(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("bad")
    failures = []

    class Logged(ReloadingFile[str]):
        def failed(self, exc):
            failures.append(exc)
            return f"unusable: {exc}"

    load = Counting()
    cache = Logged(path, load, errors=(ValueError,))
    assert cache.get() is None and cache.get() is None
    assert load.calls == 1 and len(failures) == 1 and cache.error == "unusable: bad file"
    path.write_text("good")
    assert cache.get() == "good" and cache.error is None


def test_an_unexpected_error_propagates_and_is_tried_again(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("boom")
    load = Counting()
    cache = ReloadingFile(path, load, errors=(ValueError,))
    for _ in range(2):
        with pytest.raises(RuntimeError):
            cache.get()
    assert load.calls == 2


def test_the_stamp_can_be_another_file(tmp_path):
    folder = tmp_path / "index"
    folder.mkdir()
    manifest = folder / "meta.json"
    load = Counting()
    cache = ReloadingFile(folder, lambda p: load(p / "data"), stamped=manifest)
    (folder / "data").write_text("x")
    assert cache.get() is None  # no manifest yet: not loaded
    manifest.write_text("1")
    assert cache.get() == "x"
    (folder / "data").write_text("y")
    assert cache.get() == "x"  # the manifest did not change
    manifest.write_text("22")
    assert cache.get() == "y" and load.calls == 2


def test_one_version_is_loaded_once_across_threads(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("v")
    load = Counting()
    cache = ReloadingFile(path, load)
    threads = [threading.Thread(target=cache.get) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert load.calls == 1


def test_file_stamp_and_shared_per_path(tmp_path):
    path = tmp_path / "f.txt"
    assert file_stamp(path) is None
    path.write_text("abc")
    st = os.stat(path)
    assert file_stamp(path) == (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, 3)
    shared = SharedPerPath(lambda p: ReloadingFile(p, Counting()))
    assert shared(path) is shared(tmp_path / "." / "f.txt")
    assert shared(path) is not shared(tmp_path / "g.txt")
