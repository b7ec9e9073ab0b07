"""The semantic signal's model as this installation configures it.

Layer: glue of the ``ranking`` app. Turns the settings ``SEMANTIC_MODEL`` (the dotted path of a
:class:`~ranking.core.semantic.model_files.ModelSpec`) and ``SEMANTIC_MODEL_DIR`` (where
``manage.py fetch_semantic_model`` put its files) into the spec, the folder and the process's
embedder (:func:`ranking.core.semantic.embedder.default_embedder`), for the search service,
``embed_index``, ``fetch_semantic_model`` and the benchmark.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from ranking.core.semantic.embedder import MiniLMEmbedder, default_embedder
from ranking.core.semantic.model_files import ModelSpec


def model_spec() -> ModelSpec:
    """The configured model (``SEMANTIC_MODEL``)."""
    spec = import_string(settings.SEMANTIC_MODEL)
    if not isinstance(spec, ModelSpec):
        raise ImproperlyConfigured(f"SEMANTIC_MODEL {settings.SEMANTIC_MODEL!r} is not a "
                                   "ranking.core.semantic.model_files.ModelSpec")
    return spec


def model_root() -> Path:
    """The folder of the model files (``SEMANTIC_MODEL_DIR``)."""
    return Path(settings.SEMANTIC_MODEL_DIR)


def model_embedder() -> MiniLMEmbedder:
    """The process's embedder of the configured model. Raises SemanticUnavailable."""
    return default_embedder(model_root(), model_spec())
