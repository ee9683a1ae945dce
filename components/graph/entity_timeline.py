"""`EntityTimeline`: what happened to an entity, and when — its dated facts in order, within a date range."""

from __future__ import annotations

from typing import Any

from haystack import Document, component

from components.contracts import SourceStatus
from components.graph.event_confidence import check_min_confidence
from components.graph.tools import GraphToolComponent, GraphTools, fact_to_chunk
from components.serialization import with_base_parameters


@component
class EntityTimeline(GraphToolComponent):
    """The dated timeline of one entity (its aliases and more specific names included), oldest first.

    `start_date`/`end_date` are ISO dates of any precision ("2019", "2019-06", "2019-06-30") and really filter:
    a fact is kept when the period its date names overlaps the range. A malformed date gives an error status
    that says so; the `timeline` output holds the tool-contract dicts.

    Usage:
    ```python
    timeline = EntityTimeline()
    result = timeline.run(entity_name="Nordvik Aviation", start_date="2019", end_date="2020")
    [(item["valid_at"], item["fact"]) for item in result["timeline"]]
    ```
    """

    SOURCE, MAX_LIMIT = "graph_timeline", 1000

    @with_base_parameters(GraphToolComponent.__init__)
    def __init__(self, limit: int = 200, min_event_confidence: float | None = None, **shared: Any) -> None:
        """`limit`: how many facts a run returns by default; the others as in `GraphToolComponent`.
        `min_event_confidence` (0-1): the event confidence a fact needs to be on the timeline (the others are in
        `less_certain`); None: the threshold the shipped event-confidence model was fitted with, 0: every fact."""
        self.min_event_confidence = check_min_confidence(min_event_confidence)
        GraphToolComponent.__init__(self, limit, **shared)

    @component.output_types(
        documents=list[Document], timeline=list[dict], less_certain=list[dict], entities=list[str], status=SourceStatus
    )
    def run(
        self,
        entity_name: str,
        start_date: str | None = None,
        end_date: str | None = None,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        """The timeline of `entity_name`.

        :returns: `documents`: the timeline's facts as graph Documents in date order; `timeline`: the tool-contract
            dicts (`fact`, `uuid`, `valid_at`, `invalid_at`, `source_node_uuid`, `confidence`, attribution) of the
            facts at or above `min_event_confidence`; `less_certain`: those below it, in the same shape;
            `entities`: the entity names the name matched; `status`: the run's `SourceStatus`.
        """
        empty: dict[str, Any] = {"entities": [], "timeline": [], "less_certain": []}
        found = dict(empty)

        def work(tools: GraphTools) -> list:
            found["entities"], hits = tools.timeline_hits(entity_name, start_date, end_date, self.limit, as_of)
            certain, unsure = tools.split_certain(hits, self.min_event_confidence)
            found["timeline"] = [hit.fact.contract() for hit in certain]
            found["less_certain"] = [hit.fact.contract() for hit in unsure]
            return [fact_to_chunk(hit) for hit in certain]

        outputs = self._call(work)
        return {**outputs, **(found if outputs["status"].ok else empty)}
