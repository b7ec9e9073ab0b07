"""The semantic signal's model files: which files, from where, with which hashes, and their
download (plain HTTPS, no SDK) and verification.

Layer: ``ranking.core`` (pure Python: the standard library's ``urllib`` and ``hashlib``). The
glue (``manage.py fetch_semantic_model``, :mod:`ranking.semantic_model`) passes the folder and
the spec in; :mod:`ranking.core.semantic.embedder` loads the files :func:`verified_files`
returns.

A :class:`ModelSpec` pins a model as its authors publish it: their repository, one revision
(a commit id, so the files cannot change under the same name), and for each file its path in
that revision, its size and its sha256. :data:`MINILM_L6_V2_INT8` is all-MiniLM-L6-v2 from
its authors' repository ``sentence-transformers/all-MiniLM-L6-v2`` on the Hugging Face hub:
their int8 ONNX export (``onnx/model_qint8_arm64.onnx``: weights quantised to signed int8,
run by ONNX Runtime's integer kernels on any CPU; the repository's ``model_qint8_avx512`` and
``model_qint8_avx512_vnni`` files are the same bytes) and their ``tokenizer.json``.

Files live in ``<root>/<repository>/<revision>/<path>``. :func:`download_model` fetches each
missing or damaged file from ``<base url><path>`` (the spec's, ``https://huggingface.co/<repo>
/resolve/<revision>/``, or a mirror's: the hashes make any mirror as good as the original) into
a temporary file beside it, hashing it as it arrives, and renames it into place only when its
size and sha256 are the pinned ones. A file that does not match is refused with
:class:`ModelFileMismatch`, and nothing of it is left. Urls must be ``https:``, or ``http:`` to a
loopback address (a local mirror, tests).
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

CHUNK = 1 << 20
TIMEOUT = 60.0


class ModelFileError(RuntimeError):
    """A model file cannot be had: missing, damaged, refused or not downloadable."""


class ModelFileMismatch(ModelFileError):
    """A file's size or sha256 is not the pinned one: it is refused (not kept)."""


@dataclass(frozen=True, slots=True)
class ModelFile:
    path: str     # in the repository's revision, e.g. ``onnx/model_qint8_arm64.onnx``
    size: int
    sha256: str   # lower-case hex


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A model pinned to its authors' published files. ``name`` identifies the model (and the
    embeddings it makes); ``base_url`` is where ``<path>`` of each file is downloaded from."""

    name: str
    repository: str
    revision: str
    onnx: ModelFile
    tokenizer: ModelFile
    base_url: str

    @property
    def files(self) -> tuple[ModelFile, ModelFile]:
        return (self.onnx, self.tokenizer)

    def folder(self, root: Path) -> Path:
        return Path(root) / self.repository / self.revision


_HUB = "https://huggingface.co"
_MINILM_REPOSITORY = "sentence-transformers/all-MiniLM-L6-v2"
_MINILM_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
MINILM_L6_V2_INT8 = ModelSpec(
    name="all-MiniLM-L6-v2-qint8",
    repository=_MINILM_REPOSITORY,
    revision=_MINILM_REVISION,
    onnx=ModelFile("onnx/model_qint8_arm64.onnx", 23_026_053,
                   "4278337fd0ff3c68bfb6291042cad8ab363e1d9fbc43dcb499fe91c871902474"),
    tokenizer=ModelFile("tokenizer.json", 466_247,
                        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    base_url=f"{_HUB}/{_MINILM_REPOSITORY}/resolve/{_MINILM_REVISION}/",
)


def check_url(url: str) -> str:
    """``url`` when it may be downloaded from (``https:``, or ``http:`` to a loopback host);
    ModelFileError otherwise."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and host:
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if loopback:
            return url
    raise ModelFileError(f"refusing to download the model from {url!r}: an https url is "
                         "needed (http only to a loopback address)")


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_file(path: Path, pinned: ModelFile) -> None:
    """ModelFileError when ``path`` is missing, ModelFileMismatch when its size or sha256 is
    not ``pinned``'s."""
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise ModelFileError(f"the model file {path} is missing "
                             "(manage.py fetch_semantic_model downloads it)") from exc
    if size != pinned.size:
        raise ModelFileMismatch(f"the model file {path} has {size} bytes, not the pinned "
                                f"{pinned.size}")
    got = file_digest(path)
    if got != pinned.sha256:
        raise ModelFileMismatch(f"the model file {path} has sha256 {got}, not the pinned "
                                f"{pinned.sha256}")


def verified_files(spec: ModelSpec, root: Path) -> tuple[Path, Path]:
    """(the ONNX file, the tokenizer file) of ``spec`` under ``root``, each checked against its
    pinned size and sha256 (ModelFileError or ModelFileMismatch otherwise)."""
    folder = spec.folder(root)
    paths = (folder / spec.onnx.path, folder / spec.tokenizer.path)
    for path, pinned in zip(paths, spec.files, strict=True):
        check_file(path, pinned)
    return paths


def _fetch(url: str, target: Path, pinned: ModelFile, timeout: float) -> None:
    """Download ``url`` to ``target`` through a temporary file beside it, renamed into place
    only when its size and sha256 are ``pinned``'s; the temporary file is removed otherwise."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part",
                                         dir=target.parent)
    try:
        digest, size = hashlib.sha256(), 0
        with os.fdopen(handle, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    while chunk := response.read(CHUNK):
                        size += len(chunk)
                        if size > pinned.size:
                            raise ModelFileMismatch(
                                f"{url} sends more than the pinned {pinned.size} bytes: "
                                "refused")
                        digest.update(chunk)
                        out.write(chunk)
            except (urllib.error.URLError, OSError) as exc:
                raise ModelFileError(f"cannot download {url}: {exc}") from exc
            out.flush()
            os.fsync(out.fileno())
        if size != pinned.size:
            raise ModelFileMismatch(f"{url} sent {size} bytes, not the pinned {pinned.size}: "
                                    "refused")
        if digest.hexdigest() != pinned.sha256:
            raise ModelFileMismatch(f"{url} has sha256 {digest.hexdigest()}, not the pinned "
                                    f"{pinned.sha256}: refused")
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def download_model(spec: ModelSpec, root: Path, *, base_url: str | None = None,
                   timeout: float = TIMEOUT) -> list[str]:
    """Make ``spec``'s files present and verified under ``root``: each one missing or damaged
    is downloaded from ``base_url`` (default ``spec.base_url``) + its path. Returns the paths
    downloaded (empty when all were already there). Raises ModelFileMismatch for a file that
    is not the pinned one (nothing of it kept), ModelFileError when it cannot be downloaded."""
    base = check_url(base_url or spec.base_url)
    if not base.endswith("/"):
        base += "/"
    folder = spec.folder(root)
    fetched = []
    for pinned in spec.files:
        target = folder / pinned.path
        try:
            check_file(target, pinned)
            continue
        except ModelFileError:
            pass  # missing or damaged: downloaded again
        _fetch(base + pinned.path, target, pinned, timeout)
        fetched.append(pinned.path)
    return fetched
