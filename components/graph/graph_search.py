"""`GraphSearch`: the research pipeline's graph branch: passages reached by a walk from the question's entities,
and their best facts."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from haystack import component, logging

from components.contracts import ContextChunk, ScoreKind
from components.contracts.branch import BranchQuery, branch_run
from components.embedding import get_embedding_model
from components.graph.event_confidence import check_min_confidence, default_threshold, is_certain
from components.graph.factory import GraphStoreComponent, component_graph_store, known_entities_in, resolved_graph_store
from components.graph.model import FactHit
from components.graph.passage_walk import DEFAULT_DAMPING, PassageGraphCache, WalkedPassage
from components.graph.store import GraphStore
from components.graph.tools import check_text, parse_bound
from components.knowledge_base.attribution import (
    KnowledgeBaseAccess,
    check_document_store,
    hit_to_chunk,
    parse_filters,
)
from components.knowledge_base.factory import document_field_of
from components.knowledge_base.store import ChunkHit, SearchFilters
from components.redaction import cut
from components.resilience import SourceGuard, SourceResult
from components.resilience.guard import BreakerPolicy, guard_policy_from_settings, submit_in_thread
from components.resilience.scheduling import source_twin
from components.settings import setting_or
from components.text.language import use_language_pipeline
from components.validation import clamp, within

logger = logging.getLogger(__name__)

SOURCE = "graph"
# Facts come with the passages for the entities the walk reached most, this many at most.
FACT_ENTITIES = 10


@component
class GraphSearch(GraphStoreComponent):
    """Finds knowledge-base passages for a question by walking the knowledge graph from the entities it names;
    each passage carries the graph's best facts read in it.

    The walk (`passage_walk.py`) reaches the passages of the question's entities and, through the other entities
    those name, passages a second hop away that a search for the question's words misses. They come back as
    knowledge-base chunks with full attribution (one query for all, under the knowledge-base branches' filters and
    `as_of`), ranked by the walk (`ranks["graph"]`, `metadata["graph_walk_score"]`), `semantic_relevance` their
    cosine to the question. `metadata["graph_facts"]` holds the facts read in the passage about the entities the
    walk reached most, with `valid_at`/`invalid_at`: why the graph found it. Facts are not chunks of their own: a
    fact of a passage already listed would take another document's place. The graph is read in `warm_up()` and
    re-read when it changes (`PassageGraphCache`).

    Usage:
    ```python
    search = GraphSearch(top_k=10)
    search.warm_up()
    result = search.run(query="Where was the founder of Nordvik Aviation born?")
    result["documents"], result["status"]
    ```
    """

    SOURCE = SOURCE  # the name a caller selects this branch by (`sources`)

    def __init__(
        self,
        collection: str | None = None,
        top_k: int = 10,
        facts_per_passage: int = 3,
        damping: float = DEFAULT_DAMPING,
        embedding_model: str | None = None,
        timeout_s: float | None = None,
        graph_store: GraphStore | None = None,
        document_store: Any = None,
        min_event_confidence: float | None = None,
        breaker: BreakerPolicy | dict[str, Any] | None = None,
        spacy_model: str | None = None,
        document_field: str | None = None,
    ) -> None:
        """
        :param collection: the knowledge base's collection (its graph is walked), or None for the settings' one.
        :param top_k: how many passages the walk returns (1-50).
        :param facts_per_passage: how many of the graph's facts each passage carries (0-10).
        :param damping: the share of the walk's mass that moves on at each step (0.1-0.9; the rest returns to
            the question's entities). HippoRAG's 0.5 keeps the walk within about two hops.
        :param embedding_model: the model of the question's embedding (passage and fact relevance) and of the
            knowledge base's vectors; None: EMBEDDING_MODEL as the branch is built.
        :param timeout_s: the branch's timeout, or None for the settings' tool timeout.
        :param graph_store: the graph store to walk (serialised in the pipeline YAML); None: the store the
            settings choose as the branch is built (`GRAPH_BACKEND`, `NEO4J_*`), connected in `warm_up()`.
        :param document_store: the integration's document store of the knowledge base whose chunks the walk returns
            as passages (as for `KnowledgeBaseSearch`); None: the store `KB_BACKEND` chooses.
        :param min_event_confidence: the event confidence (0-1) a fact needs to be attached to a passage; None: the
            threshold the shipped event-confidence model was fitted with, 0: every fact.
        :param breaker: the branch's circuit breaker (`BreakerPolicy.from_settings`: None takes the settings).
        :param spacy_model: the spaCy pipeline that finds the question's entities (None: SPACY_MODEL).
        :param document_field: for a knowledge base over an attached collection, the meta field that names a chunk's
            document (None: KB_DOCUMENT_FIELD as the branch is built; blank: the known fields).
        """
        if collection is not None and not collection.strip():
            raise ValueError("collection must name the knowledge base's collection, or be None for the settings' one")
        self.collection = collection
        self.top_k = within("top_k", top_k, 1, 50, whole=True)
        self.facts_per_passage = within("facts_per_passage", facts_per_passage, 0, 10, whole=True)
        self.damping = float(within("damping", float(damping), 0.1, 0.9))
        self.embedding_model = setting_or(embedding_model, "embedding_model")
        self.spacy_model = setting_or(spacy_model, "spacy_model")
        self.timeout_s = setting_or(timeout_s, "tool_timeout_s")  # None: TOOL_TIMEOUT_S as the branch is built
        self.graph_store = resolved_graph_store(graph_store, collection)
        policy = guard_policy_from_settings(self, breaker, timeout_s=self.timeout_s)
        self._guard = SourceGuard(SOURCE, policy)
        self._store: GraphStore | None = None
        self._model: Any = None
        self.document_store = check_document_store(document_store)
        # The passages' chunks.
        self.document_field = document_field_of(document_field)
        self._kb = KnowledgeBaseAccess(
            self.document_store, collection, embedding_model=self.embedding_model, document_field=self.document_field
        )
        self._passage_graph: PassageGraphCache | None = None
        self.min_event_confidence = check_min_confidence(min_event_confidence)

    def close(self) -> None:
        """Close the knowledge base the passages' chunks came from (the runtime closes its pipelines' components)."""
        self._kb.close()

    def warm_up(self) -> None:
        """Open the graph store, read its entity-passage graph and load the language pipeline and the embedding
        model once, so the first question does not pay for them."""
        if self._store is None:
            self._store = component_graph_store(self.graph_store, self.collection)
            self._passage_graph = PassageGraphCache(self._store)
            self._model = get_embedding_model(self.embedding_model)
            use_language_pipeline(self.spacy_model)
            try:
                self._passage_graph.get()
            except Exception as exc:  # noqa: BLE001 - an unreachable graph is reported by each run's status
                logger.warning("The graph is not ready yet: {reason}", reason=cut(str(exc), 200))

    def warm_up_from(self, other: object) -> None:
        """`warm_up()` on what `other` loaded when it is a branch configured alike (the same graph store and
        parameters): its graph store, in-memory entity-passage graph and knowledge base. The catalog's pipeline for a
        selection of sources warms up so from its whole research pipeline, keeping one copy of the graph in memory
        and one set of connections, not one per pipeline."""
        if type(other) is type(self) and isinstance(other, GraphSearch) and other.to_dict() == self.to_dict():
            other.warm_up()
            if self._store is None:
                self._store, self._passage_graph, self._model = other._store, other._passage_graph, other._model
            self._kb.share(other._kb)  # the passages' chunks read through the same connections
        self.warm_up()

    def known_entities(self, text: str) -> list[str]:
        """Names of the walked graph's entities `text` mentions (the research pipeline's `auto` source choice asks
        the graph this branch reads, not another one)."""
        self.warm_up()
        assert self._store is not None
        return known_entities_in(text, self._store)

    def _embedding(self, query: str, query_embedding: list[float] | None) -> np.ndarray:
        if query_embedding is not None and len(query_embedding) == self._model.dimension:
            return np.asarray(query_embedding, dtype=np.float32)
        # The question's embedding is cached per process: every branch shares one forward pass.
        return self._model.embed_one(query)

    def _passages(
        self, walked: list[WalkedPassage], query_vector: np.ndarray, scope: SearchFilters
    ) -> list[ContextChunk]:
        """The walked passages as knowledge-base chunks, in walk order: one query for all their documents, which
        also applies the knowledge base's filters and `as_of`."""
        documents = list(dict.fromkeys(passage.document_id for passage in walked))
        if scope.document_ids:
            documents = [document for document in documents if document in scope.document_ids]
        if not documents:
            return []
        store = self._kb.get()
        scope = replace(scope, document_ids=tuple(documents))
        hits = store.dense_search(query_vector, min(200, 4 * len(walked)), scope)
        by_chunk = {hit.chunk.chunk_id: hit for hit in hits}
        nearest: dict[str, ChunkHit] = {}
        for hit in hits:  # best first: a document's nearest chunk stands for facts read without a chunk
            nearest.setdefault(hit.document.document_id, hit)
        chunks: list[ContextChunk] = []
        for passage in walked:
            hit = by_chunk.get(passage.chunk_id) if passage.chunk_id else nearest.get(passage.document_id)
            if hit is None or any(chunk.id == hit.chunk.chunk_id for chunk in chunks):
                continue
            chunk = hit_to_chunk(hit, store, {SOURCE: len(chunks) + 1}, passage.score, ScoreKind.NONE)
            chunk.metadata["graph_walk_score"] = round(passage.score, 8)
            chunks.append(chunk)
        return chunks

    def _event_threshold(self) -> float:
        """The event confidence a fact needs to be attached: `min_event_confidence`, or the fitted threshold."""
        return default_threshold() if self.min_event_confidence is None else self.min_event_confidence

    def _attach_facts(self, chunks: list[ContextChunk], entities: list[str], found: dict[str, list[FactHit]]) -> None:
        """Give each passage the facts read in it, in `metadata["graph_facts"]`: why the graph found it (the facts at or
        above `min_event_confidence`)."""
        threshold = self._event_threshold()
        by_chunk = {chunk.id: chunk for chunk in chunks}
        nearest = {chunk.source_id: chunk for chunk in reversed(chunks)}
        seen: set[str] = set()
        for entity in entities:
            for hit in found.get(entity, []):
                fact = hit.fact
                chunk = by_chunk.get(fact.chunk_id) if fact.chunk_id else nearest.get(fact.document_id)
                if chunk is None or fact.uuid in seen or not is_certain(fact.confidence, threshold):
                    continue
                facts = chunk.metadata.setdefault("graph_facts", [])
                if len(facts) < self.facts_per_passage:
                    seen.add(fact.uuid)
                    facts.append(fact.contract())

    def _search(
        self,
        query: str,
        query_embedding: list[float] | None,
        as_of: str | dt.date | None,
        limit: int,
        scope: SearchFilters,
    ) -> SourceResult:
        self.warm_up()
        assert self._store is not None and self._passage_graph is not None
        walk = self._passage_graph.get().top_passages(query, limit, self.damping)
        if not walk.passages:
            return SourceResult(chunks=[], total_found=0)
        # The facts of the entities the walk reached most (the question's and the bridges) need no embedding: they
        # are read while the passages are fetched.
        store, per_entity, when = self._store, self.facts_per_passage, parse_bound(as_of, "as_of", end=True)
        # Less certain facts are left out when each entity's best facts are chosen, not after: they never take the
        # place of surer ones.
        threshold = self._event_threshold()
        facts = submit_in_thread(
            lambda: store.best_entity_facts(walk.entities[:FACT_ENTITIES], per_entity, when, min_confidence=threshold)
        )
        chunks = self._passages(walk.passages, self._embedding(query, query_embedding), scope)
        try:
            self._attach_facts(chunks, walk.entities, facts.result())
        except Exception as exc:  # noqa: BLE001 - the passages stand without their facts
            logger.warning("Graph facts not read: {reason}", reason=cut(str(exc), 200))
            return SourceResult(chunks=chunks, total_found=len(chunks), partial="the passages' facts could not be read")
        return SourceResult(chunks=chunks, total_found=len(chunks))

    @branch_run
    def run(self, branch: BranchQuery, top_k: int | None = None) -> dict[str, Any]:
        """Passages and facts for the branch's `query`.

        :param branch: the question's inputs; its `filters` are the knowledge base's (`doc_types`, `document_ids`,
            `date_from`/`date_to`) and restrict the passages and the facts; with `as_of` (a date or ISO text) only
            documents dated by then and facts valid then (begun by it, not yet ended) count.
        :param top_k: the number of passages (1-50); None: the component's `top_k`.
        :returns: `documents`: knowledge-base passages in walk order, their facts in `meta["graph_facts"]`;
            `status`: the run's `SourceStatus`; `branch`: the same documents as the ranker's `BranchDocuments`.
        """

        query_embedding, as_of = branch.query_embedding, branch.as_of

        def prepare() -> Callable[[], SourceResult]:
            text = check_text(branch.query, "query")
            parse_bound(as_of, "as_of", end=True)
            # Malformed filters are an input error, said before any work.
            scope = parse_filters(branch.filters, as_of)
            limit = clamp(self.top_k if top_k is None else top_k, 1, 50, "top_k", default=self.top_k)
            return lambda: self._search(text, query_embedding, as_of, limit, scope)

        return self._guard.branch_outputs(branch.sources, "the graph was not among the selected sources", prepare)

    run_async = source_twin(run, SOURCE)
