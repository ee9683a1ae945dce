"""The graph's tool contracts over one graph store, shared by the graph components (which the tool registry, the
pipelines, the CLI and the app run).

`graph_search(query)` -> facts `{fact, uuid, valid_at, invalid_at, source_node_uuid}`;
`get_entity_relationships(entity_name, depth)` -> `{central_entity, related_facts, search_method, depth}`;
`timeline_hits(entity_name, start_date, end_date)` -> the `get_entity_timeline` facts in date order, really
filtered; `comprehensive(query, use_vector, use_graph, limit)` -> the `perform_comprehensive_search` result;
`entity_matches(query, limit, entity_types, as_of)` -> the entities a name or text matches. Bad input raises
`ValueError` with one clear sentence.
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from components.contracts import ContextChunk, ScoreKind, SourceType
from components.graph.dates import FuzzyDate
from components.graph.event_confidence import default_threshold, is_certain
from components.graph.factory import GraphStoreComponent, component_graph_store, resolved_graph_store
from components.graph.model import ENTITY_KINDS, EntityMatch, Fact, FactHit
from components.graph.store import MAX_DEPTH, GraphStore
from components.resilience import SourceGuard, SourceResult
from components.resilience.budget import deadline_scope
from components.resilience.errors import first_line
from components.resilience.guard import BreakerPolicy, guard_policy_from_settings, submit_in_thread
from components.validation import bounded_text, clamp, within

MAX_QUERY_CHARS = 1000
MAX_LIMIT = 50
# An entity search's facts: the best few of each of its top entities.
ENTITIES_WITH_FACTS = 5
FACTS_PER_ENTITY = 3


class GraphToolComponent(GraphStoreComponent):
    """What the graph's tool components (`EntitySearch`, `EntityRelationships`, `EntityTimeline`,
    `ComprehensiveSearch`) share: their `collection`, `limit` and `graph_store` init parameters, checked; the guard of
    their source; and `GraphTools` over the store, made once in `warm_up()` (the store connects on first use, so a
    graph that is down is a run's status). A subclass names its guard's `SOURCE` and its `MAX_LIMIT`, and takes its
    own `limit` (with its default) and these parameters as `**shared` (`with_base_parameters`)."""

    SOURCE = "graph_tool"
    MAX_LIMIT = 50
    POLICY: dict[str, Any] = {}  # other values of the tool's `ResiliencePolicy` (retries...)

    def __init__(
        self,
        limit: int,
        collection: str | None = None,
        graph_store: GraphStore | None = None,
        breaker: BreakerPolicy | dict[str, Any] | None = None,
        timeout_s: float | None = None,
    ) -> None:
        """
        :param limit: how many results a run returns by default, 1..`MAX_LIMIT`.
        :param collection: the knowledge base's collection whose graph is read (None: the settings' one).
        :param graph_store: the graph store to read (serialised in the pipeline YAML); None: the store the
            settings choose as the component is built (`GRAPH_BACKEND`, `NEO4J_*`), connected in `warm_up()`.
        :param breaker: the tool's circuit breaker (`BreakerPolicy.from_settings`: None takes the settings).
        :param timeout_s: how long one call may take (None: TOOL_TIMEOUT_S).
        """
        number = isinstance(timeout_s, int | float) and not isinstance(timeout_s, bool)
        if timeout_s is not None and not (number and 0 < timeout_s <= 120):  # TOOL_TIMEOUT_S's own range
            raise ValueError(
                "timeout_s must be between 0 and 120 seconds, or None for the settings' tool timeout, "
                f"not {timeout_s!r}"
            )
        within("limit", limit, 1, self.MAX_LIMIT, whole=True)
        self.collection = collection
        self.limit = limit
        self.graph_store = resolved_graph_store(graph_store, collection)
        policy = guard_policy_from_settings(self, breaker, timeout_s=timeout_s, **self.POLICY)
        self.timeout_s = policy.timeout_s
        self._guard = SourceGuard(self.SOURCE, policy)
        self._tools: GraphTools | None = None

    def warm_up(self) -> None:
        """Make the graph store once (it connects on first use, so a graph that is down is a run's status)."""
        if self._tools is None:
            self._tools = GraphTools(component_graph_store(self.graph_store, self.collection))

    def _call(self, work: Callable[[GraphTools], list[ContextChunk] | SourceResult]) -> dict[str, Any]:
        """`work(tools)` under the source's guard: `{documents, status}`, the chunks it returned as Documents."""

        def guarded() -> list[ContextChunk] | SourceResult:
            self.warm_up()
            assert self._tools is not None
            return work(self._tools)

        result, status = self._guard.call(guarded)
        return result.outputs(status)


def check_text(value: Any, what: str) -> str:
    """`value` stripped, or ValueError when it is not text, empty or too long."""
    return bounded_text(what, value, MAX_QUERY_CHARS)


def parse_bound(value: str | None, what: str, *, end: bool = False) -> dt.date | None:
    """The first (or, with `end`, the last) day of an ISO date of any precision; ValueError when malformed."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, dt.date):
        return value
    try:
        date = FuzzyDate.parse(str(value))
    except ValueError:
        raise ValueError(f"{what} {value!r} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)") from None
    return date.end if end else date.value


def check_entity_types(value: Any) -> list[str] | None:
    """Entity types (one name or a list, any case) as the graph's kinds, or None for all; ValueError names an
    unknown one."""
    if value is None:
        return None
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple, set)) else None
    if names is None:
        raise ValueError(f"entity_types must be a list of entity types, not {value!r}")
    kinds = [str(name).strip().lower() for name in names if str(name).strip()]
    unknown = [name for name in kinds if name not in ENTITY_KINDS]
    if unknown:
        raise ValueError(f"entity_types has unknown type {unknown[0]!r}; the types are {', '.join(ENTITY_KINDS)}")
    return sorted(set(kinds)) or None


def fact_to_chunk(hit: FactHit) -> ContextChunk:
    """A graph fact as evidence: source_type `graph`, attributed to its document, chunk and sentence."""
    fact: Fact = hit.fact
    return ContextChunk(
        id=fact.uuid,
        source_type=SourceType.GRAPH,
        text=fact.text,
        semantic_relevance=hit.score,
        source_id=fact.document_id,
        source_title=fact.document_title,
        source_url=fact.document_url,
        source_date=fact.document_date,
        raw_score=hit.score,
        score_kind=ScoreKind.NONE,
        metadata={
            "fact_uuid": fact.uuid,
            "valid_at": fact.valid_at.iso() if fact.valid_at else None,
            "invalid_at": fact.invalid_at.iso() if fact.invalid_at else None,
            "entities": list(fact.entity_names),
            "document_id": fact.document_id,
            "chunk_id": fact.chunk_id,
            "chunk_index": fact.chunk_index,
            "sentence_index": fact.sentence_index,
            "source_node_uuid": fact.source_node_uuid,
            "date_method": fact.date_method,
            "hop": hit.hop or None,
        },
    )


class GraphTools:
    """The tool contracts over one graph store (and, for the comprehensive search, a vector search).

    Usage:
    ```python
    tools = GraphTools(PostgresGraphStore(collection="research"))
    entities, hits = tools.timeline_hits("Nordvik Aviation", start_date="2019", end_date="2020-06")
    ```
    """

    def __init__(
        self,
        store: GraphStore,
        vector_search: Callable[[str, int], list[ContextChunk]] | None = None,
    ) -> None:
        self.store = store
        self.vector_search = vector_search

    # -- graph_search ---------------------------------------------------------------------------------------------

    def search_hits(self, query: str, limit: int = 10, as_of: str | dt.date | None = None) -> list[FactHit]:
        """The facts matching `query`, best first (limit clamped to 1-50)."""
        limit = clamp(limit, 1, MAX_LIMIT, "limit", default=10)
        return self.store.search_facts(check_text(query, "query"), limit, parse_bound(as_of, "as_of", end=True))

    def graph_search(self, query: str, limit: int = 10, as_of: str | None = None) -> list[dict[str, Any]]:
        """Facts that match `query`: `{fact, uuid, valid_at, invalid_at, source_node_uuid}` plus attribution."""
        return [hit.fact.contract() for hit in self.search_hits(query, limit, as_of)]

    # -- relationships --------------------------------------------------------------------------------------------

    def relationship_hits(
        self, entity_name: str, depth: int = 2, limit: int = 50, as_of: str | None = None
    ) -> tuple[dict[str, Any], list[FactHit]]:
        """`get_entity_relationships`' result and the facts behind it: the facts on paths up to `depth` hops
        (clamped to 1-5) from the entity `entity_name` means, or, when no entity has that name, the facts that
        mention it (`search_method` `text_search`)."""
        name = check_text(entity_name, "entity_name")
        depth = clamp(depth, 1, MAX_DEPTH, "depth", default=2)
        limit = clamp(limit, 1, 200, "limit", default=50)
        when = parse_bound(as_of, "as_of", end=True)
        entities = self.store.find_entities(name, limit=1)
        if entities:
            central, method = entities[0].name, "graph_traversal"
            hits = self.store.related_facts(entities[0].uuid, depth, limit, when)
        else:
            central, method = name, "text_search"
            hits = self.store.search_facts(name, min(limit, MAX_LIMIT), when)
        related = [{**hit.fact.contract(), "hop": hit.hop} for hit in hits]
        return {"central_entity": central, "related_facts": related, "search_method": method, "depth": depth}, hits

    def get_entity_relationships(self, entity_name: str, depth: int = 2) -> dict[str, Any]:
        """How `entity_name` is connected: the facts on paths up to `depth` hops (clamped to 1-5)."""
        return self.relationship_hits(entity_name, depth)[0]

    # -- timeline -------------------------------------------------------------------------------------------------

    def timeline_hits(
        self,
        entity_name: str,
        start_date: str | None = None,
        end_date: str | None = None,
        limit: int = 200,
        as_of: str | None = None,
    ) -> tuple[list[str], list[FactHit]]:
        name = check_text(entity_name, "entity_name")
        start = parse_bound(start_date, "start_date")
        end = parse_bound(end_date, "end_date", end=True)
        if start and end and start > end:
            raise ValueError(f"start_date {start_date} is after end_date {end_date}")
        limit = clamp(limit, 1, 1000, "limit", default=200)
        entities = self.store.find_entities(name, limit=5)
        if not entities:
            return [], []
        hits = self.store.entity_facts(
            [e.uuid for e in entities], start, end, parse_bound(as_of, "as_of", end=True), limit
        )
        return [e.name for e in entities], hits

    @staticmethod
    def split_certain(hits: list[FactHit], min_confidence: float | None = None) -> tuple[list[FactHit], list[FactHit]]:
        """`hits` split into the facts at or above `min_confidence` (None: the shipped event-confidence model's
        threshold), which a timeline draws as events, and the less certain ones, which it only lists; a fact no
        model scored is certain."""
        threshold = default_threshold() if min_confidence is None else min_confidence
        certain = [hit for hit in hits if is_certain(hit.fact.confidence, threshold)]
        return certain, [hit for hit in hits if not is_certain(hit.fact.confidence, threshold)]

    # -- entity search --------------------------------------------------------------------------------------------

    def entity_matches(
        self, query: str, limit: int = 10, entity_types: Any = None, as_of: str | dt.date | None = None
    ) -> list[EntityMatch]:
        """The entities `query` (a name or a free text) matches, best first; limit clamped to 1-50."""
        text = check_text(query, "query")
        limit = clamp(limit, 1, MAX_LIMIT, "limit", default=10)
        kinds = check_entity_types(entity_types)
        return self.store.match_entities(text, limit, kinds, parse_bound(as_of, "as_of", end=True))

    def entity_search_hits(
        self,
        query: str,
        limit: int = 10,
        entity_types: Any = None,
        as_of: str | dt.date | None = None,
    ) -> tuple[list[EntityMatch], list[tuple[EntityMatch, FactHit]]]:
        """`entity_matches`, and the best facts of the top entities, each with the entity it was chosen for and
        scored with that entity's match score (an entity's facts together, a fact two entities share given once):
        two store queries in all."""
        matches = self.entity_matches(query, limit, entity_types, as_of)
        when = parse_bound(as_of, "as_of", end=True)
        top = matches[:ENTITIES_WITH_FACTS]
        best = self.store.best_entity_facts([match.entity.uuid for match in top], FACTS_PER_ENTITY, when)
        facts: list[tuple[EntityMatch, FactHit]] = []
        seen: set[str] = set()
        for match in top:
            for hit in best.get(match.entity.uuid, []):
                if hit.fact.uuid not in seen:
                    seen.add(hit.fact.uuid)
                    facts.append((match, FactHit(hit.fact, match.score)))
        return matches, facts

    # -- comprehensive --------------------------------------------------------------------------------------------

    def comprehensive(
        self,
        query: str,
        use_vector: bool = True,
        use_graph: bool = True,
        limit: int = 10,
        timeout_s: float | None = None,
    ) -> tuple[dict[str, Any], list[FactHit], list[ContextChunk]]:
        """`perform_comprehensive_search`'s result, the graph hits behind its `graph_results` and the chunks behind
        its `vector_results`, both sides searched at once; a side that fails or takes longer than `timeout_s` is
        reported in `errors` while the other side's results are kept. `timeout_s` is each side's deadline too
        (`deadline_scope`), so a store read the search gave up on does not go on after it."""
        query = check_text(query, "query")
        limit = clamp(limit, 1, MAX_LIMIT, "limit", default=10)
        futures: dict[str, concurrent.futures.Future] = {}
        errors: dict[str, str] = {}
        ends_at = None if timeout_s is None else time.monotonic() + timeout_s

        def side(search: Callable[[], list[Any]]) -> concurrent.futures.Future:
            if ends_at is None:
                return submit_in_thread(search)

            def within() -> list[Any]:
                with deadline_scope(ends_at):
                    return search()

            return submit_in_thread(within)

        if use_vector and self.vector_search is None:
            errors["vector"] = "no vector search is configured"
        elif use_vector:
            futures["vector"] = side(lambda: self.vector_search(query, limit))
        if use_graph:
            futures["graph"] = side(lambda: self.search_hits(query, limit))
        concurrent.futures.wait(futures.values(), timeout=timeout_s)
        found: dict[str, list[Any]] = {"vector": [], "graph": []}
        for side, future in futures.items():
            if not future.done():
                errors[side] = f"{side} search did not answer within {timeout_s:g} s"
            elif (exc := future.exception()) is not None:  # one side failing must not sink the other
                errors[side] = first_line(exc, 300)
            else:
                found[side] = future.result()
        vector_results = [
            {
                "content": chunk.text,
                "score": chunk.semantic_relevance,
                "document_id": chunk.source_id,
                "document_title": chunk.source_title,
                "chunk_id": chunk.id,
                "chunk_index": chunk.metadata.get("chunk_index"),
            }
            for chunk in found["vector"]
        ]
        graph_results = [hit.fact.contract() for hit in found["graph"]]
        result = {
            "vector_results": vector_results,
            "graph_results": graph_results,
            "total_results": len(vector_results) + len(graph_results),
            "errors": errors,
        }
        return result, found["graph"], found["vector"]
