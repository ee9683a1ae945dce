"""The one graph-store interface: the embedded PostgreSQL store and the Neo4j store both implement it.

A store holds entities (with aliases), facts (a sentence, its dates, its document, chunk and sentence) and which
entities each fact links. Replacing or deleting a document's facts happens in the caller's transaction where the
backend shares PostgreSQL with the knowledge base.
"""

from __future__ import annotations

import datetime as dt
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from components.database import DatabaseUnavailable
from components.graph.model import DocumentGraph, Entity, FactHit, normalise_name

MAX_DEPTH = 5


@dataclass(frozen=True)
class FactScope:
    """The knowledge base's document filters as they apply to facts: their documents and those documents' dates."""

    document_ids: tuple[str, ...] = ()
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    @property
    def empty(self) -> bool:
        return not (self.document_ids or self.date_from or self.date_to)

    def admits(self, fact: Any) -> bool:
        """True when `fact` (a `Fact`) is inside the scope."""
        if self.document_ids and fact.document_id not in self.document_ids:
            return False
        when = fact.document_date
        if (self.date_from or self.date_to) and when is None:
            return False
        return not ((self.date_from and when < self.date_from) or (self.date_to and when > self.date_to))


class GraphUnavailable(DatabaseUnavailable):
    """The graph backend cannot be opened or reached; the message says what to do (the CLI prints it alone)."""


def table_prefix(collection: str) -> str:
    """The graph tables' prefix for a knowledge-base collection (so tests and collections never share a graph)."""
    safe = re.sub(r"[^a-z0-9_]", "_", collection.lower())
    if not safe or not re.match(r"[a-z_]", safe):
        raise ValueError(f"{collection!r} cannot name graph tables; use letters, digits and underscores")
    return f"{safe[:40]}_graph_"


def rank_entity_matches(name: str, candidates: list[Entity], alias_map: dict[str, set[str]]) -> list[Entity]:
    """The entities `name` means, best first: exact name or alias, then more specific names holding every word of
    a name of two or more words ("iTunes store" -> "iTunes Music Store"; a one-word name is the head of too many
    others: "Apple" is not "Apple Corps"), else the longest entity name inside it ("Beatles Apple Corps" ->
    "Apple Corps"). `alias_map` maps an entity uuid to its alias keys."""
    key = normalise_name(name)
    if not key:
        return []
    words = set(key.split())
    exact = [e for e in candidates if e.key == key or key in alias_map.get(e.uuid, set())]
    exact.sort(key=lambda e: (e.key != key, -e.fact_count))
    wider = [e for e in candidates if e not in exact and words <= set(e.key.split()) and (len(words) > 1 or not exact)]
    wider.sort(key=lambda e: (len(e.key.split()), -e.fact_count))
    if exact or wider:
        return exact + wider
    inner = [e for e in candidates if set(e.key.split()) <= words]
    if not inner:
        return []
    longest = max(len(e.key.split()) for e in inner)
    best = [e for e in inner if len(e.key.split()) == longest]
    best.sort(key=lambda e: -e.fact_count)
    return best[:1]


class GraphStore(ABC):
    """What every graph backend offers. Implementations are thread-safe; reads never write."""

    backend: str

    @abstractmethod
    def replace_document(self, graph: DocumentGraph, *, connection: Any = None) -> None:
        """Replace everything `graph.document_id` contributed with `graph` (entities merged by key and alias)."""

    @abstractmethod
    def delete_document(self, document_id: str, *, connection: Any = None) -> int:
        """Remove a document's facts and aliases, and every entity left without facts; returns facts removed."""

    @abstractmethod
    def find_entities(self, name: str, limit: int = 5) -> list[Entity]:
        """The entities `name` means, best first (see `rank_entity_matches`)."""

    @abstractmethod
    def search_facts(
        self, query: str, limit: int = 10, as_of: dt.date | None = None, scope: FactScope | None = None
    ) -> list[FactHit]:
        """Facts matching `query` (full text, plus the facts of entities it names), best first, scores 0-1;
        `scope` keeps only facts of some documents or of documents dated in a range."""

    @abstractmethod
    def entity_facts(
        self,
        entity_uuids: list[str],
        start: dt.date | None = None,
        end: dt.date | None = None,
        as_of: dt.date | None = None,
        limit: int = 200,
    ) -> list[FactHit]:
        """Facts about the entities whose dated period overlaps [start, end], in date order (undated last)."""

    @abstractmethod
    def related_facts(
        self, entity_uuid: str, depth: int = 2, limit: int = 50, as_of: dt.date | None = None
    ) -> list[FactHit]:
        """Facts on paths up to `depth` hops from the entity (hop 1 first), each with its hop."""

    @abstractmethod
    def search_entities(self, text: str, limit: int = 20) -> list[Entity]:
        """Entities whose name or an alias contains `text` (case-insensitive), most facts first."""
        raise NotImplementedError

    def document_entities(self, document_id: str, limit: int = 200) -> list[Entity]:
        """The entities a document's facts mention, most facts first."""
        raise NotImplementedError

    def known_names(self, keys: set[str]) -> set[str]:
        """Which of these normalised names are entity names or aliases in the graph (the corpus's gazetteer)."""

    @abstractmethod
    def document_fact_count(self, document_id: str) -> int:
        """How many facts a document has in the graph."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """How many entities and facts the graph holds."""

    @abstractmethod
    def get_entity(self, entity_uuid: str) -> Entity | None:
        """One entity by id."""

    def fact_embeddings(self, fact_uuids: list[str], model: str) -> dict[str, Any]:
        """Embeddings of facts computed earlier with `model` (a cache; backends without one return nothing)."""
        return {}

    def store_fact_embeddings(self, embeddings: dict[str, Any], model: str) -> None:  # noqa: B027 - optional
        """Keep facts' embeddings for later questions (a cache; backends without one ignore it)."""

    def drop(self) -> None:  # noqa: B027 - optional
        """Remove the graph's tables or nodes (tests)."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release connections."""
