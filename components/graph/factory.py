"""Making graph stores and extractors: from the settings, or from a component's serialised `graph_store`.

Nothing here is cached: each component makes its store in its own `warm_up()` (or is given one). What the
embedded stores share is the PostgreSQL server and its connection pool (`components/database.py`), which says so.
"""

from __future__ import annotations

import difflib
import importlib
from typing import TYPE_CHECKING, Any

from haystack.core.errors import DeserializationError
from haystack.core.serialization import import_class_by_name
from haystack.utils import Secret

from components.graph.extraction import LanguageExtractor
from components.graph.llm_extraction import LLMGraphExtractor
from components.graph.model import name_grams
from components.graph.neo4j_store import Neo4jGraphStore
from components.graph.postgres_store import PostgresGraphStore
from components.graph.store import GraphNotFound, GraphStore, GraphUnavailable
from components.resilience.guard import GuardedComponent
from components.settings import Settings, get_settings

if TYPE_CHECKING:
    from components.graph.extraction import GraphExtractor

_OWN_STORES = ("components.graph.postgres_store.PostgresGraphStore", "components.graph.neo4j_store.Neo4jGraphStore")


def graph_store_from_settings(collection: str | None = None, settings: Settings | None = None) -> GraphStore:
    """A new, unconnected graph store for `collection` (default: the knowledge base's collection) on the backend
    `GRAPH_BACKEND` names: tables in the knowledge base's PostgreSQL, or Neo4j (`NEO4J_*`, the password read
    from `NEO4J_PASSWORD` when it connects; a value the settings read from their `.env` file is passed in-process,
    never serialised)."""
    settings = settings or get_settings()
    collection = collection or settings.kb_collection
    if settings.graph_backend == "neo4j":
        if not settings.neo4j_uri:
            raise GraphUnavailable("GRAPH_BACKEND is neo4j but NEO4J_URI is not set.")
        return Neo4jGraphStore(
            settings.neo4j_uri,
            settings.neo4j_username,
            database=settings.neo4j_database,
            collection=collection,
            fallback_password=neo4j_password_from_settings(settings),
        )
    return PostgresGraphStore(collection)


def require_graph(store: GraphStore) -> GraphStore:
    """`store`, checked to hold its collection's graph before a read names it: a collection without one is a
    one-sentence `GraphNotFound` naming the collections that have one (close matches first). Nothing is created:
    reads never make a graph (`GraphStore.ensure_readable`), ingestion does."""
    if store.exists():
        return store
    names = sorted(set(store.collections()))
    close = difflib.get_close_matches(store.collection, names, n=5, cutoff=0.6)
    listed = close + [name for name in names if name not in close]
    if not listed:
        raise GraphNotFound(
            f"collection {store.collection!r} has no knowledge graph: no collection has one yet "
            "(`research ingest` makes one)"
        )
    more = f" and {len(listed) - 10} more" if len(listed) > 10 else ""
    raise GraphNotFound(
        f"collection {store.collection!r} has no knowledge graph; collections with one: "
        f"{', '.join(repr(n) for n in listed[:10])}{more}"
    )


def neo4j_password_from_settings(settings: Settings | None = None) -> Secret | None:
    """NEO4J_PASSWORD as the settings read it, the `.env` file included, for a Neo4j store's `fallback_password`
    (in-process, never serialised: the store's `password` stays the env-var secret); None when unset or empty (a
    token secret cannot be empty)."""
    stored = (settings or get_settings()).neo4j_password
    return Secret.from_token(stored.get_secret_value()) if stored is not None and stored.get_secret_value() else None


def check_graph_store(graph_store: GraphStore | None, collection: str | None) -> GraphStore | None:
    """A component's `graph_store` init parameter, checked: a `GraphStore` or None, and not a store of another
    collection than the component's `collection`; ValueError otherwise."""
    if graph_store is not None and not isinstance(graph_store, GraphStore):
        raise ValueError(f"graph_store must be a GraphStore or None, not {type(graph_store).__name__}")
    store_collection = getattr(graph_store, "collection", None)
    if graph_store is not None and collection and store_collection and store_collection != collection:
        raise ValueError(f"graph_store holds collection {store_collection!r}, not {collection!r}")
    return graph_store


def resolved_graph_store(graph_store: GraphStore | None, collection: str | None) -> GraphStore | None:
    """A graph component's `graph_store` init parameter as its `__init__` keeps it: the store given (checked by
    `check_graph_store`), else the store the settings choose now (`GRAPH_BACKEND`, `NEO4J_*`; unconnected), so the
    component's YAML names it. None only when the settings name no usable store (GRAPH_BACKEND neo4j without
    NEO4J_URI): `warm_up()` and each run then say why."""
    graph_store = check_graph_store(graph_store, collection)
    if graph_store is not None:
        return graph_store
    try:
        return graph_store_from_settings(collection)
    except GraphUnavailable:
        return None


def component_graph_store(graph_store: GraphStore | None, collection: str | None) -> GraphStore:
    """The store a graph component reads: the one it was given, else a new one the settings choose (its
    `warm_up()` calls this once)."""
    return graph_store if graph_store is not None else graph_store_from_settings(collection)


def deserialize_graph_store(data: GraphStore | dict[str, Any] | None) -> GraphStore | None:
    """The store a component's serialised `graph_store` describes; `DeserializationError` names a bad type."""
    if data is None or isinstance(data, GraphStore):
        return data
    if not isinstance(data, dict) or "type" not in data:
        raise DeserializationError("graph_store must be a mapping with 'type' and 'init_parameters'")
    module, _, name = str(data["type"]).rpartition(".")
    try:
        # Our own stores load anywhere; any other class goes through Haystack's deserialisation allowlist.
        cls = (
            getattr(importlib.import_module(module), name)
            if data["type"] in _OWN_STORES
            else import_class_by_name(data["type"])
        )
    except (ImportError, AttributeError) as exc:
        raise DeserializationError(f"graph_store type {data['type']!r} cannot be imported") from exc
    if not (isinstance(cls, type) and issubclass(cls, GraphStore)):
        raise DeserializationError(f"graph_store type {data['type']!r} is not a graph store")
    if issubclass(cls, Neo4jGraphStore):
        # A password written in the settings' `.env` file counts for a loaded store as for one the settings made.
        parameters = {**(data.get("init_parameters") or {}), "fallback_password": neo4j_password_from_settings()}
        data = {**data, "init_parameters": parameters}
    return cls.from_dict(data)


class GraphStoreComponent(GuardedComponent):
    """Serialisation of the components that take a `graph_store` init parameter: the store is written with its own
    `to_dict()` and read back by `deserialize_graph_store` (our stores load without Haystack's allowlist)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        init_parameters = data.get("init_parameters") or {}
        if "graph_store" in init_parameters:
            graph_store = deserialize_graph_store(init_parameters["graph_store"])
            data = {**data, "init_parameters": {**init_parameters, "graph_store": graph_store}}
        return super().from_dict(data)


def open_extractor(settings: Settings | None = None) -> GraphExtractor:
    """The extractor the settings choose: the offline spaCy extractor (`spacy`, or `rules` from older settings),
    or the configured OpenAI-compatible chat model (`llm`)."""
    settings = settings or get_settings()
    if settings.graph_extractor == "llm":
        return LLMGraphExtractor.from_settings(settings)
    return LanguageExtractor(embedding_model=settings.embedding_model)


def known_entities_in(question: str, store: GraphStore) -> list[str]:
    """Names of `store`'s entities the question mentions (word n-grams up to four words, aliases included)."""
    grams = name_grams(question)
    return sorted(store.known_names(set(grams))) if grams else []
