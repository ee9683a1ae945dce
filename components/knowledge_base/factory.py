"""From settings or a Haystack document store to a `KnowledgeBase`: the one place that knows which chunk index
wraps which integration's store.

Nothing here is cached per process: a component builds its knowledge base in `warm_up()` from the document store it
was given. What is shared is shared explicitly, each in one documented place: the PostgreSQL connection pools per
database (`components.database.connection_pool_for`), the local Qdrant / milvus-lite clients per path (their index
modules), the embedding model (`components.embedding.get_embedding_model`).

Each backend module (`components/knowledge_base/<backend>_index.py`) offers `document_store_for(settings,
collection, dimension)` (the store the catalog puts in `pipelines.yaml`), `open_chunk_index(document_store,
embedding_model)` and `collection_names(document_store)` (what exists, read through the backend's own client without
creating anything); it may keep clients it shares per local folder in `CLIENTS` (a `SharedClients`).
"""

from __future__ import annotations

import difflib
import importlib
import sys
from typing import Any

from haystack import logging

from components.embedding import get_embedding_model
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.registry import DocumentRegistry, validate_collection
from components.knowledge_base.store import KnowledgeBaseUnavailable
from components.resilience.errors import first_line
from components.settings import DEFAULT_EMBEDDING_MODEL, Settings, get_settings

logger = logging.getLogger(__name__)

# Backend name -> (index module, the integration's document store class name, its collection attribute).
BACKENDS = {
    "pgvector": ("components.knowledge_base.pgvector_index", "PgvectorDocumentStore", "table_name"),
    "qdrant": ("components.knowledge_base.qdrant_index", "QdrantDocumentStore", "index"),
    "milvus": ("components.knowledge_base.milvus_index", "MilvusDocumentStore", "collection_name"),
}
# What the assistant keeps beside a collection `name`: not collections to offer in place of a mistyped one.
_SIDE_SUFFIXES = ("_sentences", "_terms", "_keywords", "_evidence", "_chunk_terms", "_documents", "_chunk_documents")
_DEFAULT_DIMENSION = 384  # all-MiniLM-L6-v2, the bundled model


def _module(backend: str) -> Any:
    if backend not in BACKENDS:
        raise KnowledgeBaseUnavailable(
            f"Unknown knowledge-base backend {backend!r}; choose pgvector, milvus or qdrant."
        )
    module_name = BACKENDS[backend][0]
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise KnowledgeBaseUnavailable(
            f"The {backend} knowledge base is not available in this installation ({module_name} cannot be "
            "imported); set KB_BACKEND=pgvector or install it."
        ) from exc


def backend_of(document_store: Any) -> str:
    """The backend name of an integration's document store, by its class; a ValueError for any other object."""
    names = {cls.__name__ for cls in type(document_store).__mro__}
    for backend, (_, class_name, _) in BACKENDS.items():
        if class_name in names:
            return backend
    raise ValueError(
        f"{type(document_store).__name__} is not a knowledge-base document store; give a PgvectorDocumentStore, "
        "QdrantDocumentStore or MilvusDocumentStore."
    )


def embedding_dimension(settings: Settings | None = None) -> int:
    """The dimension of the settings' embedding model (loading it only when it is not the bundled one)."""
    settings = settings or get_settings()
    if settings.embedding_model == DEFAULT_EMBEDDING_MODEL:
        return _DEFAULT_DIMENSION
    return int(get_embedding_model(settings.embedding_model).dimension)


def document_store_for(settings: Settings | None = None, collection: str | None = None) -> Any:
    """The integration's document store that `KB_BACKEND` chooses, for `collection` (default `KB_COLLECTION`):
    what the catalog gives the knowledge-base components, and all `KB_BACKEND` decides."""
    settings = settings or get_settings()
    collection = collection or settings.kb_collection
    validate_collection(collection)
    return _module(settings.kb_backend).document_store_for(settings, collection, embedding_dimension(settings))


class CollectionNotFound(KnowledgeBaseUnavailable):
    """The collection named does not exist; the message names those that do."""


def require_collection(document_store: Any) -> None:
    """Check that the store's collection exists, through the backend's own client and before the store is used
    (opening a Qdrant or pgvector store creates its collection): a missing one is a one-sentence
    `KnowledgeBaseUnavailable` naming the collections that do exist, close matches first. Nothing is created."""
    backend = backend_of(document_store)
    name = str(getattr(document_store, BACKENDS[backend][2]))
    try:
        names = set(_module(backend).collection_names(document_store))
    except KnowledgeBaseUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - client libraries raise anything; the caller needs one sentence
        raise KnowledgeBaseUnavailable(f"The {backend} collections could not be listed: {first_line(exc)}") from exc
    if name in names:
        return
    names = {n for n in names if not any(n.endswith(s) and n[: -len(s)] in names for s in _SIDE_SUFFIXES)}
    close = difflib.get_close_matches(name, sorted(names), n=5, cutoff=0.6)
    listed = close + sorted(names - set(close))
    holds = f"it holds {', '.join(repr(n) for n in listed[:10])}" if listed else "it holds none"
    more = f" and {len(listed) - 10} more" if len(listed) > 10 else ""
    raise CollectionNotFound(
        f"The {backend} knowledge base has no collection {name!r} ({holds}{more}); nothing was created."
    )


def knowledge_base_for(
    document_store: Any,
    embedding_model: str | None = None,
    checks_text_analysis: bool = True,
    document_field: str | None = None,
    keyword_index_max_postings: int | None = None,
) -> KnowledgeBase:
    """The `KnowledgeBase` over an integration's document store (its chunks) and the document registry;
    `checks_text_analysis` False for a reader that never keyword-searches or writes (its keyword index's text
    analysis is neither checked nor recorded: `ChunkIndex.check_text_analysis`); `keyword_index_max_postings` the
    most postings pgvector keyword search copies into memory (None: the setting; the other backends search natively).

    Raises `KnowledgeBaseUnavailable` (or its `KnowledgeBaseMismatch`) with one sentence when it cannot be opened,
    and ValueError for a store of another kind or a bad collection name.
    """
    backend = backend_of(document_store)
    try:
        options = {"keyword_index_max_postings": keyword_index_max_postings} if backend == "pgvector" else {}
        index = _module(backend).open_chunk_index(
            document_store, embedding_model or get_settings().embedding_model, checks_text_analysis, **options
        )
        # Same-named collections on two engines are two knowledge bases: each engine but pgvector prefixes its name.
        prefix = index.collection if backend == "pgvector" else f"{backend}_{index.collection}"
        registry = DocumentRegistry(index.collection, url=getattr(index, "database_url", None), table_prefix=prefix)
    except (KnowledgeBaseUnavailable, ValueError):
        raise
    except Exception as exc:  # noqa: BLE001 - client libraries raise anything; the caller needs one sentence
        raise KnowledgeBaseUnavailable(f"The {backend} knowledge base could not be opened: {first_line(exc)}") from exc
    logger.debug("Opened the {backend} knowledge base {collection}", backend=backend, collection=index.collection)
    return KnowledgeBase(index, registry, document_field=document_field_or_none(document_field))


def document_field_or_none(name: str | None) -> str | None:
    """The meta field naming an attached chunk's document (KB_DOCUMENT_FIELD), None when blank."""
    return (name or "").strip() or None


def document_field_of(name: str | None) -> str:
    """A component's meta field naming an attached chunk's document, as it keeps it and its YAML writes it: `name`,
    or KB_DOCUMENT_FIELD when None; blank (not None) for the known fields, so that a YAML written without the setting
    does not take another machine's."""
    if name is None:
        name = get_settings().kb_document_field
    return (name or "").strip()


def open_knowledge_base(settings: Settings | None = None, collection: str | None = None) -> KnowledgeBase:
    """A new `KnowledgeBase` on the settings' backend and collection, for the CLI, the app and scripts (components
    are given their document store instead). Close it when done."""
    settings = settings or get_settings()
    return knowledge_base_for(
        document_store_for(settings, collection), settings.embedding_model, document_field=settings.kb_document_field
    )


def close_knowledge_bases() -> None:
    """Release the local clients the backends share per path (Qdrant local mode, milvus-lite), so that another
    process can open their folders; pgvector holds nothing that needs it."""
    for module_name, _, _ in BACKENDS.values():
        module = sys.modules.get(module_name)
        clients = getattr(module, "CLIENTS", None)
        if clients is not None:
            clients.close_all()
