"""`EntityRelationships`: how an entity is connected — the facts on paths up to a few hops from it."""

from __future__ import annotations

from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from components.contracts import SourceStatus, chunk_to_document
from components.graph.factory import (
    check_graph_store,
    component_graph_store,
    deserialize_graph_store_inplace,
    serialize_graph_store,
)
from components.graph.store import MAX_DEPTH, GraphStore
from components.graph.tools import GraphTools, clamp, fact_to_chunk
from components.resilience import ResiliencePolicy, SourceGuard, SourceResult


@component
class EntityRelationships:
    """The relationships of one entity, walked through the facts that link entities (depth clamped to 1-5).

    When no entity has that name, the facts that mention it are returned instead and `search_method` says
    `text_search` rather than `graph_traversal`.

    Usage:
    ```python
    relations = EntityRelationships()
    result = relations.run(entity_name="Airbus", depth=2)
    result["relationships"]["central_entity"], len(result["relationships"]["related_facts"])
    ```
    """

    def __init__(
        self, collection: str | None = None, limit: int = 50, graph_store: GraphStore | None = None
    ) -> None:
        """
        :param collection: the knowledge base's collection whose graph is read (None: the settings' one).
        :param limit: see the class docstring.
        :param graph_store: the graph store to read (serialised in the pipeline YAML); None: the store the
            settings choose (`GRAPH_BACKEND`), made in `warm_up()`.
        """
        if not isinstance(limit, int) or not 1 <= limit <= 200:
            raise ValueError(f"limit must be an integer between 1 and 200, not {limit!r}")
        self.collection = collection
        self.limit = limit
        self.graph_store = check_graph_store(graph_store, collection)
        self._guard = SourceGuard("graph_relationships", ResiliencePolicy.from_settings())
        self._tools: GraphTools | None = None

    def warm_up(self) -> None:
        """Make the graph store once (it connects on first use, so a graph that is down is a run's status)."""
        if self._tools is None:
            self._tools = GraphTools(component_graph_store(self.graph_store, self.collection))

    @component.output_types(documents=list[Document], relationships=dict, status=SourceStatus)
    def run(self, entity_name: str, depth: int = 2, as_of: str | None = None) -> dict[str, Any]:
        """Facts connecting `entity_name` to others within `depth` hops.

        :returns: `documents`: the facts as graph Documents (nearest first, `hop` in meta); `relationships`:
            `{central_entity, related_facts, search_method, depth}`; `status`: the run's `SourceStatus`.
        """
        depth = clamp(depth, 1, MAX_DEPTH, 2)
        found: dict[str, Any] = {"central": None, "method": "graph_traversal", "hits": []}

        def work() -> SourceResult:
            self.warm_up()
            assert self._tools is not None
            found["central"], found["method"], found["hits"] = self._tools.relationship_hits(
                entity_name, depth, self.limit, as_of
            )
            return SourceResult(chunks=[fact_to_chunk(hit) for hit in found["hits"]])

        result, status = self._guard.call(work)
        related = []
        for hit in found["hits"] if status.ok else []:
            item = hit.fact.contract()
            item["hop"] = hit.hop
            related.append(item)
        relationships = {
            "central_entity": found["central"] or (entity_name or "").strip(),
            "related_facts": related,
            "search_method": found["method"],
            "depth": depth,
        }
        return {
            "documents": [chunk_to_document(c) for c in result.chunks],
            "relationships": relationships,
            "status": status,
        }

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self, collection=self.collection, limit=self.limit, graph_store=serialize_graph_store(self.graph_store)
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EntityRelationships:
        deserialize_graph_store_inplace(data["init_parameters"])
        return default_from_dict(cls, data)
