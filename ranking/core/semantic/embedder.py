"""The text embedding model of the semantic signal: all-MiniLM-L6-v2 with int8 weights, run
by ONNX Runtime, from its authors' published files downloaded once (no network when it runs).

Layer: ``ranking.core`` (pure Python; ``onnxruntime`` and ``tokenizers`` are the optional
``semantic`` extra and are imported only when a model is loaded). Used by the semantic
re-ranking (:mod:`ranking.core.semantic.rerank`), which embeds one query at a time, and by the
building of a bundle's embeddings (:mod:`ranking.core.semantic.build`), which embeds pages in
batches.

Contract of :class:`TextEmbedder`: ``embed(texts)`` returns one float32 row of ``dim`` numbers
per text, each of length 1 (so a dot product is the cosine), the same row for the same text
whatever the batch; ``name`` identifies the model and its input length, and a bundle's
stored embeddings are used only with an embedder of the same name.

Where the files come from: a :class:`~ranking.core.semantic.model_files.ModelSpec` (by default
:data:`~ranking.core.semantic.model_files.MINILM_L6_V2_INT8`, the authors' int8 ONNX export and
WordPiece ``tokenizer.json`` at a pinned revision) names them, ``manage.py
fetch_semantic_model`` downloads them under a model folder, and they are checked against their
pinned sha256 each time a process loads them. The sentence vector is the mean of the last
hidden states over the text's tokens (padding left out), then normalised: all-MiniLM-L6-v2's
own pooling. Texts longer than ``max_tokens`` tokens are cut (the model was trained on
128-token inputs).

:func:`default_embedder` loads the model once per process (about 0.5 s, 250 MiB of memory)
and raises :class:`SemanticUnavailable` when the packages are not installed or the files are
missing or not the pinned ones, so that a search falls back to the lexical ranking alone.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ranking.core.semantic.model_files import (
    MINILM_L6_V2_INT8,
    ModelFileError,
    ModelSpec,
    verified_files,
)

MAX_TOKENS = 128
THREADS = 1  # a query embeds a few words: one thread is faster than two on a busy machine
FloatMatrix = npt.NDArray[np.float32]


class SemanticUnavailable(RuntimeError):
    """The embedding model cannot be loaded (its packages are not installed, or a file is
    missing, unreadable or not the pinned one): the semantic signal is off."""


class TextEmbedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> FloatMatrix: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 run by ONNX Runtime on the CPU with ``threads`` threads, inputs cut to
    ``max_tokens`` tokens (see the module docstring)."""

    dim = 384

    def __init__(self, model: Path, tokenizer: Path, *, max_tokens: int = MAX_TOKENS,
                 threads: int = THREADS, name: str = MINILM_L6_V2_INT8.name) -> None:
        try:  # optional dependencies (the ``semantic`` extra): imported when a model is made
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise SemanticUnavailable(
                f"{exc.name} is not installed (pip install 'yioopy[semantic]')") from exc
        self.name = f"{name}-{max_tokens}"
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


_LOADED: dict[tuple[str, str, int], MiniLMEmbedder | SemanticUnavailable] = {}
_LOAD_LOCK = threading.Lock()


def load_embedder(root: Path, spec: ModelSpec = MINILM_L6_V2_INT8, *,
                  max_tokens: int = MAX_TOKENS) -> MiniLMEmbedder:
    """A new embedder of ``spec``'s files under ``root`` (checked against their pinned
    sha256 first). Raises SemanticUnavailable."""
    try:
        model, tokenizer = verified_files(spec, root)
    except ModelFileError as exc:
        raise SemanticUnavailable(str(exc)) from exc
    return MiniLMEmbedder(model, tokenizer, max_tokens=max_tokens, name=spec.name)


def default_embedder(root: Path, spec: ModelSpec = MINILM_L6_V2_INT8, *,
                     max_tokens: int = MAX_TOKENS) -> MiniLMEmbedder:
    """The process's embedder of ``spec`` under ``root`` (loaded at the first call, kept; a
    failure is kept too, so that searches do not retry the load each time). Raises
    SemanticUnavailable."""
    key = (str(root), spec.name, max_tokens)
    with _LOAD_LOCK:
        got = _LOADED.get(key)
        if got is None:
            try:
                got = load_embedder(root, spec, max_tokens=max_tokens)
            except SemanticUnavailable as exc:
                got = exc
            _LOADED[key] = got
    if isinstance(got, SemanticUnavailable):
        raise got
    return got


def forget_default_embedder() -> None:
    """Drop the kept embedders (and kept failures): the next call loads again."""
    with _LOAD_LOCK:
        _LOADED.clear()


def no_embedder() -> TextEmbedder:
    """The embedder of a searcher built with no model configured: always unavailable."""
    raise SemanticUnavailable("no embedding model is configured")
