"""The disk watermarks: pause below the low-water mark, resume at the high-water mark (and
not in between), a write that found the disk full pauses too, and the reason the admin shows."""

from __future__ import annotations

import errno

import pytest

from crawler.core.queue_server.disk_space import (
    MB,
    DiskGuard,
    DiskUsage,
    Watermarks,
    disk_usage,
    is_out_of_space,
)

TOTAL = 1000 * MB


class FakeDisk:
    """Free space the test sets (the real filesystem is in tests/integration/crawl)."""

    def __init__(self, free: int) -> None:
        self.free = free
        self.now = 0.0

    def probe(self, path) -> DiskUsage:
        return DiskUsage(str(path), self.free, TOTAL)

    def clock(self) -> float:
        return self.now


def guard_for(disk: FakeDisk, marks: Watermarks, **options) -> DiskGuard:
    return DiskGuard(marks, "/work/qs0", probe=disk.probe, clock=disk.clock, interval=0.0,
                     **options)


def test_pause_below_the_low_mark_and_resume_only_at_the_high_mark() -> None:
    disk = FakeDisk(500 * MB)
    guard = guard_for(disk, Watermarks(100 * MB, 200 * MB))
    assert not guard.check().paused
    disk.free = 150 * MB  # between the marks, coming from above: still running
    assert not guard.check().paused
    disk.free = 99 * MB
    state = guard.check()
    assert state.paused and state.cause == "low"
    disk.free = 150 * MB  # between the marks, coming from below: still paused
    assert guard.check().paused
    disk.free = 199 * MB
    assert guard.check().paused
    disk.free = 200 * MB
    state = guard.check()
    assert not state.paused and state.cause == "" and state.reason == ""


def test_the_reason_names_free_space_path_and_resume_mark() -> None:
    disk = FakeDisk(12 * MB)
    state = guard_for(disk, Watermarks(100 * MB, 250 * MB)).check()
    assert state.reason == ("paused: disk nearly full, 12 MB free on /work/qs0; resumes "
                            "above 250 MB")
    disk.free = MB // 2
    counters = guard_for(disk, Watermarks(100 * MB, 250 * MB)).check().as_counters()
    assert counters["reason"].startswith("paused: disk nearly full, 0.5 MB free on /work/qs0")
    assert counters["paused"] and counters["free_bytes"] == MB // 2
    assert counters["pause_below"] == 100 * MB and counters["resume_at"] == 250 * MB


def test_percentages_of_the_filesystem_count_when_larger() -> None:
    marks = Watermarks(10 * MB, 20 * MB, pause_free_percent=5.0, resume_free_percent=8.0)
    assert marks.pause_below(TOTAL) == 50 * MB and marks.resume_at(TOTAL) == 80 * MB
    small = 100 * MB  # on a small filesystem the byte marks are larger
    assert marks.pause_below(small) == 10 * MB and marks.resume_at(small) == 20 * MB
    disk = FakeDisk(60 * MB)
    guard = guard_for(disk, marks)
    assert not guard.check().paused
    disk.free = 49 * MB
    assert guard.check().paused
    disk.free = 79 * MB
    assert guard.check().paused
    disk.free = 80 * MB
    assert not guard.check().paused


def test_the_resume_mark_is_never_below_the_pause_mark() -> None:
    # 10% pause with a 20 MB resume: resuming waits for the pause mark to be passed
    marks = Watermarks(0, 20 * MB, pause_free_percent=10.0)
    assert marks.resume_at(TOTAL) == marks.pause_below(TOTAL) == 100 * MB


@pytest.mark.parametrize("fields", [
    {"pause_free_bytes": 200, "resume_free_bytes": 100},
    {"pause_free_bytes": -1},
    {"pause_free_percent": 10.0, "resume_free_percent": 5.0},
    {"resume_free_percent": 100.0},
])
def test_bad_marks_are_refused(fields) -> None:
    with pytest.raises(ValueError):
        Watermarks(**{"pause_free_bytes": 0, "resume_free_bytes": 0, **fields})


def test_marks_at_zero_never_pause_but_a_full_disk_does() -> None:
    disk = FakeDisk(0)
    guard = guard_for(disk, Watermarks(0, 0), min_full_seconds=5.0)
    assert not guard.check().paused
    state = guard.note_full()
    assert state.paused and state.cause == "full"
    assert state.reason.startswith("paused: disk full, 0.0 MB free on /work/qs0")
    disk.free = 500 * MB
    disk.now = 4.9  # a full disk is not tried again at once, even if it says it has room
    assert guard.check().paused
    disk.now = 5.0
    assert not guard.check().paused


def test_a_full_disk_waits_for_the_high_mark() -> None:
    disk = FakeDisk(300 * MB)  # above both marks: the error came from elsewhere (a quota)
    guard = guard_for(disk, Watermarks(100 * MB, 200 * MB), min_full_seconds=1.0)
    guard.note_full()
    disk.now = 10.0
    disk.free = 150 * MB
    assert guard.check().cause == "full"
    disk.free = 200 * MB
    assert not guard.check().paused


def test_measures_at_most_every_interval() -> None:
    disk = FakeDisk(500 * MB)
    calls = []

    def probe(path):
        calls.append(path)
        return disk.probe(path)

    guard = DiskGuard(Watermarks(100 * MB, 200 * MB), "/w", probe=probe, clock=disk.clock,
                      interval=1.0)
    guard.check()
    guard.check()
    disk.now = 0.5
    guard.check()
    assert len(calls) == 1
    disk.now = 1.0
    disk.free = 0
    assert guard.check().paused and len(calls) == 2
    assert guard.check(force=True).paused and len(calls) == 3


def test_out_of_space_errors() -> None:
    assert is_out_of_space(OSError(errno.ENOSPC, "No space left on device"))
    assert is_out_of_space(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not is_out_of_space(OSError(errno.EACCES, "Permission denied"))
    assert not is_out_of_space(ValueError("no"))


def test_disk_usage_of_a_folder_not_made_yet(tmp_path) -> None:
    usage = disk_usage(tmp_path / "work" / "qs0")
    assert usage.path == str(tmp_path / "work" / "qs0")
    assert 0 < usage.free_bytes <= usage.total_bytes
