"""`EntitySearch`: which entities of the knowledge graph a name or a text means, and what the graph holds on them."""

from __future__ import annotations

import time
from typing import Any

from haystack import Document, component

from components.contracts import SourceStatus
from components.graph.tools import (
    MAX_LIMIT,
    GraphToolComponent,
    GraphTools,
    check_entity_types,
    check_text,
    fact_to_chunk,
    parse_bound,
)
from components.resilience import SourceResult
from components.serialization import with_base_parameters
from components.validation import clamp

SOURCE = "graph_entity_search"


@component
class EntitySearch(GraphToolComponent):
    """The entities whose name or an alias matches a query, best first, with the best facts of the top ones.

    A query can be a name ("Nordvik Aviation AS"), an alias ("Olsen"), the start of a name ("Mar"), a misspelling
    ("Nordvki") or a free text that names entities ("What did Nordvik and Marta Olsen agree?"). Each entity comes with
    its type, aliases, number of facts, the dates of its first and last dated facts, a 0-1 score and how it matched:
    `exact`, `alias`, `prefix`, `contains` (every word of the query is in its name), `within` (the query, itself a
    longer name, holds its name: "Orla Vennick" finds "Vennick"), `mention` (the text holds its name) or `fuzzy`.
    `entity_types` keeps some types only (person, organization, place, product, event, other); `as_of` counts only
    the facts valid on that date. Nothing matching is a success with no entities; bad input is
    an error status that says what is wrong.

    Usage:
    ```python
    search = EntitySearch()
    result = search.run(query="Olsen", entity_types=["person"])
    [(item["name"], item["match"], item["score"]) for item in result["entities"]]
    ```
    """

    SOURCE, MAX_LIMIT = SOURCE, MAX_LIMIT

    @with_base_parameters(GraphToolComponent.__init__)
    def __init__(self, limit: int = 10, **shared: Any) -> None:
        """`limit`: how many entities a run returns by default; the others as in `GraphToolComponent`."""
        GraphToolComponent.__init__(self, limit, **shared)

    @component.output_types(entities=list[dict], documents=list[Document], status=SourceStatus)
    def run(
        self,
        query: str,
        limit: int | None = None,
        entity_types: list[str] | None = None,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        """The entities `query` matches.

        :param query: An entity name, part of one, or a free text naming entities.
        :param limit: How many entities at most (clamped to 1-50; default: the component's `limit`).
        :param entity_types: Keep only entities of these types.
        :param as_of: ISO date of any precision; only facts valid then are counted and returned.
        :returns: `entities`: `{uuid, name, type, aliases, fact_count, first_fact_date, last_fact_date, score,
            match, matched}` best first; `documents`: the best facts of the top entities as graph Documents (each
            with its entity's score and `matched_entity` in meta); `status`: the run's `SourceStatus`, whose
            `total_found` is the number of entities.
        """
        started = time.monotonic()
        try:
            text = check_text(query, "query")
            count = clamp(limit, 1, MAX_LIMIT, "limit", default=self.limit) if limit is not None else self.limit
            kinds = check_entity_types(entity_types)
            parse_bound(as_of, "as_of", end=True)
        except ValueError as exc:
            return {"entities": [], "documents": [], "status": SourceStatus.refused(SOURCE, str(exc), started)}
        found: dict[str, Any] = {"entities": []}

        def work(tools: GraphTools) -> SourceResult:
            matches, facts = tools.entity_search_hits(text, count, kinds, as_of)
            found["entities"] = [match.to_dict() for match in matches]
            chunks = [fact_to_chunk(hit) for _, hit in facts]
            for chunk, (match, _) in zip(chunks, facts, strict=True):
                chunk.metadata["matched_entity"] = match.entity.name
            return SourceResult(chunks=chunks, total_found=len(matches))

        outputs = self._call(work)
        return {**outputs, "entities": found["entities"] if outputs["status"].ok else []}
