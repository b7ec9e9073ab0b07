"""Url files: FIFO across members and files, valid gzip, resumable from a checkpoint state."""

from __future__ import annotations

import gzip
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.core.scheduler.cldtable import CldTable
from crawler.core.scheduler.durable.journal import JournalWriter, read_journal
from crawler.core.scheduler.lanes import Lane, LaneContext


def test_fifo_across_members_files_and_days(tmp_path: Path) -> None:
    ctx = LaneContext(tmp_path, buffer_limit=7, max_file_bytes=1024, day="20250101")
    lane = Lane(ctx, "UrlQueue/Tier0")
    records = [f"http://example.com/page/{i}\t1\t0.0\t0\t0\t0.0" for i in range(1000)]
    for i, record in enumerate(records[:600]):
        if i == 300:
            ctx.day = "20250102"
        lane.push(record)
    out = [lane.pop() for _ in range(250)]
    for record in records[600:]:
        lane.push(record)
    out += lane.pop_all()
    assert out == records
    assert lane.pop() is None and len(lane) == 0
    files = sorted(tmp_path.rglob("*.txt.gz"))
    assert len(files) > 3
    assert {f.parent.name for f in files} == {"20250101", "20250102"}
    text = b"".join(gzip.decompress(f.read_bytes()) for f in files).decode()
    assert text.splitlines() == records[: len(text.splitlines())]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 40)), max_size=30))
def test_checkpoint_state_resumes_the_same_fifo(tmp_path_factory, ops) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("lane")
    ctx = LaneContext(root, buffer_limit=5, max_file_bytes=1024)
    lane = Lane(ctx, "L")
    expected: list[str] = []
    counter = 0
    for push, n in ops:
        if push:
            for _ in range(n):
                record = f"r{counter}"
                counter += 1
                lane.push(record)
                expected.append(record)
        else:
            for _ in range(n):
                got = lane.pop()
                assert got == (expected.pop(0) if expected else None)
        if n % 3 == 0:
            state, garbage = lane.checkpoint()
            for rel in garbage:
                (root / rel).unlink()
            lane = Lane(ctx, "L", state)
    assert lane.pop_all() == expected


def test_journal_ignores_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "journal.1.log"
    writer = JournalWriter(path, sync=False)
    writer.append(("add", 1.0, ["a"]))
    writer.append(("ack", 2.0, "x"))
    writer.close()
    with open(path, "ab") as handle:
        handle.write(b"\x10\x00\x00\x00garbage")
    assert list(read_journal(path)) == [("add", 1.0, ["a"]), ("ack", 2.0, "x")]


def test_cld_table_round_trip(tmp_path: Path) -> None:
    table = CldTable()
    for key in range(1000):
        table.update(key * 7919, 1.0, 0.5 if key % 2 else 0.0)
    table.update(7919, 1.0, 0.25)
    table.save(tmp_path / "cld.bin")
    loaded = CldTable.load(tmp_path / "cld.bin")
    assert len(loaded) == 1000
    assert loaded.get(7919) == (2, 2.0, 0.75)
    assert loaded.get(0) == (1, 1.0, 0.0)
    assert loaded.get(12345) == (0, 0.0, 0.0)
