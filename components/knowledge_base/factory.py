"""`open_knowledge_base`: the one place that turns settings into a knowledge-base store, once per process."""

from __future__ import annotations

import hashlib
import importlib
import threading

from haystack import logging

from components.knowledge_base.store import KnowledgeBaseStore, KnowledgeBaseUnavailable
from components.settings import Settings, get_settings

logger = logging.getLogger(__name__)

_LOCK = threading.Lock()
_STORES: dict[tuple[str, str, str], KnowledgeBaseStore] = {}

# Backends other engineers provide, imported only when chosen: module path and class name.
_LAZY_BACKENDS = {
    "milvus": ("components.knowledge_base.milvus_store", "MilvusKnowledgeBase"),
    "qdrant": ("components.knowledge_base.qdrant_store", "QdrantKnowledgeBase"),
}


def _location(settings: Settings) -> str:
    """Where the backend keeps its data; hashed, because a database URL may carry a password."""
    backend = settings.kb_backend
    if backend == "pgvector":
        where = settings.database_url.get_secret_value() if settings.database_url else str(settings.data_dir / "pg")
    elif backend == "milvus":
        where = settings.milvus_uri or str(settings.data_dir)
    else:
        where = settings.qdrant_url or str(settings.qdrant_path or settings.data_dir)
    return hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]


def _open(backend: str, collection: str, settings: Settings) -> KnowledgeBaseStore:
    if backend == "pgvector":
        from components.database import DatabaseUnavailable, database_url
        from components.knowledge_base.pgvector_store import PgvectorKnowledgeBase

        try:
            url = database_url(settings)
        except DatabaseUnavailable as exc:
            raise KnowledgeBaseUnavailable(str(exc)) from exc
        return PgvectorKnowledgeBase(collection, url=url, embedding_model=settings.embedding_model)
    if backend not in _LAZY_BACKENDS:
        raise KnowledgeBaseUnavailable(
            f"Unknown knowledge-base backend {backend!r}; choose pgvector, milvus or qdrant."
        )
    module_name, class_name = _LAZY_BACKENDS[backend]
    try:
        module = importlib.import_module(module_name)
        store_class = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise KnowledgeBaseUnavailable(
            f"The {backend} knowledge base is not available in this installation ({module_name}.{class_name} "
            "cannot be imported); set KB_BACKEND=pgvector or install it."
        ) from exc
    return store_class(collection, settings)


def open_knowledge_base(settings: Settings | None = None, collection: str | None = None) -> KnowledgeBaseStore:
    """The store the settings choose (`KB_BACKEND`), for `collection` (default `KB_COLLECTION`).

    One instance per (backend, collection, location) per process, shared by every component and thread.
    Raises `KnowledgeBaseUnavailable` with one sentence when the backend cannot be opened.
    """
    settings = settings or get_settings()
    backend = settings.kb_backend
    collection = collection or settings.kb_collection
    key = (backend, collection, _location(settings))
    store = _STORES.get(key)
    if store is not None:
        return store
    with _LOCK:
        store = _STORES.get(key)
        if store is not None:
            return store
        try:
            store = _open(backend, collection, settings)
        except (KnowledgeBaseUnavailable, ValueError):
            raise
        except Exception as exc:  # noqa: BLE001 - client libraries raise anything; the caller needs one sentence
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise KnowledgeBaseUnavailable(
                f"The {backend} knowledge base {collection!r} could not be opened: {first}"
            ) from exc
        _STORES[key] = store
        logger.info("Opened the {backend} knowledge base {collection}", backend=backend, collection=collection)
        return store


def opened_knowledge_base(collection: str | None = None, settings: Settings | None = None) -> KnowledgeBaseStore | None:
    """The store for `collection` if this process has already opened it, else None (nothing is opened or created).

    For stages after retrieval (the ranker), which should use a store the searches opened, never make one.
    """
    settings = settings or get_settings()
    return _STORES.get((settings.kb_backend, collection or settings.kb_collection, _location(settings)))


def close_knowledge_bases() -> None:
    """Close every store this process opened (tests, shutdown, and before another process needs a file lock)."""
    with _LOCK:
        stores = list(_STORES.values())
        _STORES.clear()
    for store in stores:
        try:
            store.close()
        except Exception as exc:  # noqa: BLE001 - closing must go on for the others
            logger.warning(
                "Closing the {backend} knowledge base failed: {reason}", backend=store.backend, reason=str(exc)
            )
