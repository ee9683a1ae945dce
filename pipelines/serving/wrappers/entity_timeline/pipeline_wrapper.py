"""Hayhooks wrapper of the `entity_timeline` pipeline: `POST /entity_timeline/run` and the MCP tool."""

from __future__ import annotations

from components.graph.tools import parse_bound
from pipelines.serving.catalog_wrapper import CatalogPipelineWrapper, InvalidRequest, as_payload, require_text
from pipelines.serving.models import TimelineResponse, facts_from


class PipelineWrapper(CatalogPipelineWrapper):
    """An entity's dated timeline from the knowledge graph."""

    pipeline_name = "entity_timeline"

    def run_api(
        self,
        entity_name: str,
        start_date: str | None = None,
        end_date: str | None = None,
        as_of: str | None = None,
    ) -> TimelineResponse:
        """What happened to an entity, and when: its dated facts from the knowledge graph, oldest first.

        :param entity_name: The entity (a company, person, product...); aliases and more specific names match too.
        :param start_date: Keep facts from this date on (2019, 2019-06 or 2019-06-30).
        :param end_date: Keep facts up to this date (any precision, as start_date).
        :param as_of: Only facts known on this date (YYYY-MM-DD).
        :returns: The matched entity names, the timeline entries (each with its event `confidence`), the less
            certain facts below the event-confidence threshold, and the facts as chunks with their sources.
        """
        name = require_text(entity_name, "entity_name", max_chars=200)
        try:  # a bad date is the caller's to fix (422), not a timeline with an error status
            for value, what in ((start_date, "start_date"), (end_date, "end_date"), (as_of, "as_of")):
                parse_bound(value, what)
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from exc
        outputs = self.run_catalog(
            {"entity_name": name, "start_date": start_date, "end_date": end_date, "as_of": as_of}
        )
        response = TimelineResponse(
            entity=name,
            entities=list(outputs.get("entities") or []),
            timeline=list(outputs.get("timeline") or []),
            less_certain=list(outputs.get("less_certain") or []),
            facts=facts_from(outputs.get("documents")),
            status=outputs["status"],
        )
        return as_payload(response)
