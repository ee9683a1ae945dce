"""The local embedding model, loaded once per process, and the query embedder component.

The names are imported on first use: `components.embedding.runtime` (standard library only) can then be imported
by a command deciding whether it needs torch, without importing Haystack (which imports torch) first.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "EmbeddingModel": "components.embedding.model",
    "get_embedding_model": "components.embedding.model",
    "query_vector": "components.embedding.model",
    "resolve_model_path": "components.embedding.runtime",
    "QueryEmbedder": "components.embedding.query_embedder",
}

__all__ = ["EmbeddingModel", "QueryEmbedder", "get_embedding_model", "query_vector", "resolve_model_path"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
