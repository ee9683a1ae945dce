"""Hayhooks wrapper of the `entity_relationships` pipeline: `POST /entity_relationships/run` and the MCP tool."""

from __future__ import annotations

from pydantic import StrictInt  # a JSON true is not the number 1

from components.graph.tools import parse_bound
from pipelines.serving.catalog_wrapper import CatalogPipelineWrapper, InvalidRequest, as_payload, require_text
from pipelines.serving.models import RelationshipsResponse, facts_from


class PipelineWrapper(CatalogPipelineWrapper):
    """An entity's connections in the knowledge graph."""

    pipeline_name = "entity_relationships"

    def run_api(self, entity_name: str, depth: StrictInt = 2, as_of: str | None = None) -> RelationshipsResponse:
        """How an entity is connected to others in the knowledge graph, up to 1-5 hops away.

        :param entity_name: The entity to start from.
        :param depth: How many hops to follow (1-5).
        :param as_of: Only facts known on this date (YYYY-MM-DD).
        :returns: The central entity, the connecting facts (nearest first) as chunks, and the search method.
        """
        name = require_text(entity_name, "entity_name", max_chars=200)
        if not 1 <= depth <= 5:
            raise InvalidRequest("depth must be between 1 and 5")
        try:  # a bad date is the caller's to fix (422), not relationships with an error status
            parse_bound(as_of, "as_of")
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from exc
        outputs = self.run_catalog({"entity_name": name, "depth": depth, "as_of": as_of})
        response = RelationshipsResponse(
            entity=name,
            relationships=dict(outputs.get("relationships") or {}),
            facts=facts_from(outputs.get("documents")),
            status=outputs["status"],
        )
        return as_payload(response)
