"""PartitionDocumentBundle.read_records: the column-wise decode of a partition's ``.ix`` table
gives exactly the records (or the error naming the first damaged one) of the one-record-at-a-
time decoder, whatever byte of the table is damaged."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.documents import store
from indexer.core.errors import CorruptIndexError
from tests.unit.indexer.helpers import make_doc


def _outcome(read) -> object:
    try:
        return read()
    except CorruptIndexError as exc:
        return ("error", str(exc))


@pytest.fixture
def documents(tmp_path: Path) -> store.PartitionDocumentBundle:
    with IndexBundleWriter(tmp_path / "b", BundleConfig(max_partition_docs=500)) as writer:
        writer.append([make_doc(i) for i in range(10)])
    return store.PartitionDocumentBundle(tmp_path / "b" / "documents")


def test_every_damaged_byte_gives_what_the_record_decoder_gives(
        documents: store.PartitionDocumentBundle) -> None:
    path, _ = store.partition_paths(documents.directory, 0)
    pristine = path.read_bytes()
    state = documents.partitions[0]
    records = documents.read_records(0)
    assert len(records) == 10
    assert records == store._records_one_by_one(pristine[store.HEADER_SIZE:], path,
                                                state.blob_bytes)
    errors = 0
    for where in range(store.HEADER_SIZE, len(pristine)):
        for flip in (0x01, 0xFF):
            data = bytearray(pristine)
            data[where] ^= flip
            path.write_bytes(bytes(data))
            body = bytes(data[store.HEADER_SIZE:])
            got = _outcome(lambda: documents.read_records(0))
            if body[-1] != 0xFF:
                assert got == ("error", f"{path}: last committed record is not terminated")
                continue
            expected = _outcome(partial(store._records_one_by_one, body, path,
                                        state.blob_bytes))
            if isinstance(expected, list) and len(expected) != state.docs:
                expected = ("error", f"{path}: {len(expected)} records, parameters say "
                                     f"{state.docs}")
            assert got == expected, (where, flip)
            errors += isinstance(got, tuple)
    path.write_bytes(pristine)
    assert errors > 1.5 * (len(pristine) - store.HEADER_SIZE)  # nearly every flip is caught
