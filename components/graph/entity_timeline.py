"""`EntityTimeline`: what happened to an entity, and when — its dated facts in order, within a date range."""

from __future__ import annotations

from typing import Any

from haystack import Document, component

from components.contracts import SourceStatus
from components.graph.store import GraphStore
from components.graph.tools import GraphToolComponent, GraphTools, fact_to_chunk


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

    def __init__(self, collection: str | None = None, limit: int = 200, graph_store: GraphStore | None = None) -> None:
        """`limit` is described above; `collection` and `graph_store` as in `GraphToolComponent`."""
        self._configure("graph_timeline", collection, limit, 1000, graph_store)

    @component.output_types(documents=list[Document], timeline=list[dict], entities=list[str], status=SourceStatus)
    def run(
        self,
        entity_name: str,
        start_date: str | None = None,
        end_date: str | None = None,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        """The timeline of `entity_name`.

        :returns: `documents`: the facts as graph Documents in date order; `timeline`: the tool-contract dicts
            (`fact`, `uuid`, `valid_at`, `invalid_at`, `source_node_uuid`, attribution); `entities`: the entity
            names the name matched; `status`: the run's `SourceStatus`.
        """
        found: dict[str, Any] = {"entities": [], "timeline": []}

        def work(tools: GraphTools) -> list:
            found["entities"], hits = tools.timeline_hits(entity_name, start_date, end_date, self.limit, as_of)
            found["timeline"] = [hit.fact.contract() for hit in hits]
            return [fact_to_chunk(hit) for hit in hits]

        outputs = self._call(work)
        return {**outputs, **(found if outputs["status"].ok else {"entities": [], "timeline": []})}
