"""manage.py index_verify / index_info through call_command (no database needed)."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from helpers import make_doc

from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    path = tmp_path / "bundle"
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=30)) as writer:
        writer.append([make_doc(i) for i in range(70)])
    DictionaryUpdater(path).update()
    return path


def test_index_info(bundle: Path) -> None:
    out = StringIO()
    call_command("index_info", str(bundle), "--top", "3", stdout=out)
    text = out.getvalue()
    assert "documents: 70 pages, 0 links" in text
    assert "next partition 2" in text
    assert "w1_____" in text
    assert len([line for line in text.splitlines() if "closed" in line]) == 2


def test_index_verify_ok_and_damaged(bundle: Path) -> None:
    out = StringIO()
    call_command("index_verify", str(bundle), stdout=out)
    assert "index is consistent" in out.getvalue()
    target = bundle / "positions_doc_map" / "1" / "positions"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 1
    target.write_bytes(bytes(data))
    err = StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("index_verify", str(bundle), stdout=StringIO(), stderr=err)
    assert "positions_doc_map/1/positions: payload checksum mismatch" in err.getvalue()


def test_index_info_missing_bundle(tmp_path: Path) -> None:
    with pytest.raises(CommandError):
        call_command("index_info", str(tmp_path / "nope"), stdout=StringIO())
