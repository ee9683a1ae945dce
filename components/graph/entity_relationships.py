"""`EntityRelationships`: how an entity is connected — the facts on paths up to a few hops from it."""

from __future__ import annotations

from typing import Any

from haystack import Document, component

from components.contracts import SourceStatus
from components.graph.store import MAX_DEPTH
from components.graph.tools import GraphToolComponent, GraphTools, fact_to_chunk
from components.serialization import with_base_parameters
from components.validation import clamp


@component
class EntityRelationships(GraphToolComponent):
    """The relationships of one entity, walked through the facts that link entities (depth clamped to 1-5).

    When no entity has that name, the facts that mention it are returned instead and `search_method` says
    `text_search` rather than `graph_traversal`.

    Usage:
    ```python
    relations = EntityRelationships()
    result = relations.run(entity_name="Nordvik Aviation", depth=2)
    result["relationships"]["central_entity"], len(result["relationships"]["related_facts"])
    ```
    """

    SOURCE, MAX_LIMIT = "graph_relationships", 200

    @with_base_parameters(GraphToolComponent.__init__)
    def __init__(self, limit: int = 50, **shared: Any) -> None:
        """`limit`: how many related facts a run returns by default; the others as in `GraphToolComponent`."""
        GraphToolComponent.__init__(self, limit, **shared)

    @component.output_types(documents=list[Document], relationships=dict, status=SourceStatus)
    def run(self, entity_name: str, depth: int = 2, as_of: str | None = None) -> dict[str, Any]:
        """Facts connecting `entity_name` to others within `depth` hops.

        :returns: `documents`: the facts as graph Documents (nearest first, `hop` in meta); `relationships`:
            `{central_entity, related_facts, search_method, depth}`; `status`: the run's `SourceStatus`.
        """
        depth = clamp(depth, 1, MAX_DEPTH, "depth", default=2)
        relationships = {
            "central_entity": (entity_name or "").strip(),
            "related_facts": [],
            "search_method": "graph_traversal",
            "depth": depth,
        }

        def work(tools: GraphTools) -> list:
            found, hits = tools.relationship_hits(entity_name, depth, self.limit, as_of)
            relationships.update(found)
            return [fact_to_chunk(hit) for hit in hits]

        return {**self._call(work), "relationships": relationships}
