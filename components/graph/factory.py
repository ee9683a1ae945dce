"""Opening the graph store and the extractor the settings choose."""

from __future__ import annotations

import threading

from components.graph.extraction import GraphExtractor, LanguageExtractor
from components.graph.store import GraphStore
from components.settings import Settings, get_settings

_LOCK = threading.Lock()
_STORES: dict[tuple[str, str], GraphStore] = {}


def open_graph_store(collection: str | None = None, settings: Settings | None = None) -> GraphStore:
    """The process-wide graph store for `collection` (default: the knowledge base's collection)."""
    settings = settings or get_settings()
    collection = collection or settings.kb_collection
    backend = settings.graph_backend
    with _LOCK:
        store = _STORES.get((backend, collection))
        if store is None:
            if backend == "neo4j":
                from components.graph.neo4j_store import Neo4jGraphStore

                store = Neo4jGraphStore.from_settings(collection, settings)
            else:
                from components.graph.postgres_store import PostgresGraphStore

                store = PostgresGraphStore(collection)
            _STORES[(backend, collection)] = store
        return store


def open_extractor(settings: Settings | None = None) -> GraphExtractor:
    """The extractor the settings choose: the offline spaCy extractor (`spacy`, or `rules` from older settings),
    or the configured OpenAI-compatible chat model (`llm`)."""
    settings = settings or get_settings()
    if settings.graph_extractor == "llm":
        from components.graph.llm_extraction import LLMGraphExtractor

        return LLMGraphExtractor.from_settings(settings)
    return LanguageExtractor()


def known_entities_in(question: str, collection: str | None = None) -> list[str]:
    """Names of graph entities the question mentions (word n-grams up to four words, aliases included)."""
    from components.graph.model import normalise_name

    words = normalise_name(question).split()
    grams = {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(len(words), i + 4) + 1)}
    if not grams:
        return []
    return sorted(open_graph_store(collection).known_names(grams))
