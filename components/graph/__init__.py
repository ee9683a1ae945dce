"""The knowledge graph: entities and dated facts extracted at ingestion, one store interface (embedded PostgreSQL
or Neo4j), and the components that search it, walk its relationships and build entity timelines."""

from components.graph.dates import FuzzyDate
from components.graph.model import DocumentGraph, Entity, EntityMatch, Fact, FactHit, normalise_name
from components.graph.store import GraphStore, GraphUnavailable

__all__ = [
    "DocumentGraph",
    "Entity",
    "EntityMatch",
    "Fact",
    "FactHit",
    "FuzzyDate",
    "GraphStore",
    "GraphUnavailable",
    "normalise_name",
]
