import os
import time

from crawler.core.transport.spool import Spool


def test_put_take_done_in_order(tmp_path):
    spool = Spool(tmp_path)
    for i in range(5):
        spool.put("batch", f"m{i}".encode())
    assert spool.pending("batch") == 5
    items = list(spool.take("batch"))
    assert [i.payload for i in items] == [b"m0", b"m1", b"m2", b"m3", b"m4"]
    for item in items[:3]:
        spool.done(item)
    assert [i.payload for i in Spool(tmp_path).take("batch")] == [b"m3", b"m4"]
    assert list(spool.take("other")) == []


def test_damaged_message_is_quarantined_not_applied(tmp_path):
    spool = Spool(tmp_path)
    good = spool.put("batch", b"good")
    bad = spool.put("batch", b"will be flipped")
    data = bytearray(bad.read_bytes())
    data[-1] ^= 0xFF
    bad.write_bytes(bytes(data))
    assert [i.payload for i in spool.take("batch")] == [b"good"]
    assert (tmp_path / "damaged").exists() and not bad.exists() and good.exists()


def test_leftover_temporaries_are_ignored_and_cleaned(tmp_path):
    spool = Spool(tmp_path)
    folder = tmp_path / "batch"
    folder.mkdir()
    tmp = folder / "00000000000000000001-1-00000000.msg.tmp"
    tmp.write_bytes(b"half")
    old = time.time() - 120
    os.utime(tmp, (old, old))
    assert list(spool.take("batch")) == []
    assert not tmp.exists()
