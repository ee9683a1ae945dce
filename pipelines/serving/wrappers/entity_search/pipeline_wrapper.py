"""Hayhooks wrapper of the `entity_search` pipeline: `POST /entity_search/run` and the MCP tool."""

from __future__ import annotations

from pydantic import StrictInt  # a JSON true is not the number 1

from components.graph.tools import MAX_QUERY_CHARS, check_entity_types, parse_bound
from pipelines.serving.catalog_wrapper import CatalogPipelineWrapper, InvalidRequest, as_payload, require_text
from pipelines.serving.models import EntitySearchResponse, facts_from


class PipelineWrapper(CatalogPipelineWrapper):
    """Entities of the knowledge graph by name or text."""

    pipeline_name = "entity_search"

    def run_api(
        self,
        query: str,
        limit: StrictInt = 10,
        entity_types: list[str] | None = None,
        as_of: str | None = None,
    ) -> EntitySearchResponse:
        """Which entities of the knowledge graph a name or a text means, and what the graph holds on them.

        :param query: An entity name, an alias, the start of a name, a misspelt name, or a text naming entities.
        :param limit: How many entities at most (1-50).
        :param entity_types: Keep only these types: person, organization, place, product, event, other.
        :param as_of: Only facts valid on this date (2019, 2019-06 or 2019-06-30).
        :returns: The entities best first (type, aliases, fact count, first and last fact dates, a 0-1 score and
            how each matched) and the best facts of the top entities as chunks with their sources.
        """
        text = require_text(query, "query", max_chars=MAX_QUERY_CHARS)
        if not 1 <= limit <= 50:
            raise InvalidRequest("limit must be between 1 and 50")
        try:
            kinds = check_entity_types(entity_types)
            parse_bound(as_of, "as_of", end=True)
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from exc
        outputs = self.run_catalog({"query": text, "limit": limit, "entity_types": kinds, "as_of": as_of})
        response = EntitySearchResponse(
            query=text,
            entities=list(outputs.get("entities") or []),
            facts=facts_from(outputs.get("documents")),
            status=outputs["status"],
        )
        return as_payload(response)
