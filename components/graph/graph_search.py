"""`GraphSearch`: the research pipeline's graph branch: passages reached by a walk from the question's entities,
and their best facts."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict, logging

from components.contracts import ContextChunk, ScoreKind, SourceStatus, source_selected
from components.graph.passage_walk import DEFAULT_DAMPING, WalkedPassage, passage_graph_cache
from components.graph.tools import GraphTools, check_text, clamp, fact_to_chunk, parse_bound, scope_from_filters
from components.knowledge_base.attribution import hit_to_chunk, open_store, parse_filters
from components.resilience import ResiliencePolicy, SourceGuard, SourceResult
from components.settings import DEFAULT_EMBEDDING_MODEL

logger = logging.getLogger(__name__)

SOURCE = "graph"
# Facts come from the question's best-seeded entities, this many at most, a few each.
SEED_ENTITIES_FOR_FACTS = 5
FACTS_PER_ENTITY = 2


@component
class GraphSearch:
    """Finds knowledge-base passages for a question by walking the knowledge graph from the entities it names,
    plus the graph's best facts about those entities.

    The walk is a personalised PageRank over the entity-passage graph (`components/graph/passage_walk.py`):
    seeded by the question's entities, it reaches their passages and, through the other entities those passages
    name, the passages a second hop away, which a search for the question's words misses. The passages come back
    as knowledge-base chunks with full attribution (one knowledge-base query for all of them), ranked by the walk
    (`ranks["graph"]`), `semantic_relevance` the chunk's cosine to the question, `metadata["graph_walk_score"]`
    the walk's mass; they fuse with the knowledge-base branches' copies of the same chunks. Facts are one sentence
    each with `valid_at`/`invalid_at`; `as_of` keeps only facts valid then and documents dated by then.

    The graph is read once per process and re-read when it changes (`passage_graph_cache`), so a question costs
    the walk in memory, one knowledge-base query and one facts query.

    Usage:
    ```python
    search = GraphSearch(top_k=10)
    search.warm_up()
    result = search.run(query="Who directed the film shot in Leland, North Carolina in 1986?")
    result["documents"], result["status"]
    ```
    """

    def __init__(
        self,
        collection: str | None = None,
        top_k: int = 10,
        facts_k: int = 3,
        damping: float = DEFAULT_DAMPING,
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
        timeout_s: float | None = None,
    ) -> None:
        """
        :param collection: the knowledge base's collection (its graph is walked), or None for the settings' one.
        :param top_k: how many passages the walk returns (1-50).
        :param facts_k: how many facts come with them (0-20).
        :param damping: the share of the walk's mass that moves on at each step (0.1-0.9; the rest returns to
            the question's entities). HippoRAG's 0.5 keeps the walk within about two hops.
        :param embedding_model: the model of the question's embedding (passage and fact relevance).
        :param timeout_s: the branch's timeout, or None for the settings' tool timeout.
        """
        if collection is not None and not collection.strip():
            raise ValueError("collection must name the knowledge base's collection, or be None for the settings' one")
        if not isinstance(top_k, int) or not 1 <= top_k <= 50:
            raise ValueError(f"top_k must be an integer between 1 and 50, not {top_k!r}")
        if not isinstance(facts_k, int) or not 0 <= facts_k <= 20:
            raise ValueError(f"facts_k must be an integer between 0 and 20, not {facts_k!r}")
        if not 0.1 <= float(damping) <= 0.9:
            raise ValueError(f"damping must be between 0.1 and 0.9, not {damping!r}")
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.collection = collection
        self.top_k = top_k
        self.facts_k = facts_k
        self.damping = float(damping)
        self.embedding_model = embedding_model
        self.timeout_s = timeout_s
        self._guard = SourceGuard(SOURCE, ResiliencePolicy.from_settings(timeout_s=timeout_s))
        self._tools: GraphTools | None = None
        self._model: Any = None

    def warm_up(self) -> None:
        """Open the graph store, read its entity-passage graph and load the language pipeline once, so the first
        question does not pay for them."""
        if self._tools is None:
            from components.graph.factory import open_graph_store
            from components.text.language import language_pipeline

            store = open_graph_store(self.collection)
            self._tools = GraphTools(store)
            try:
                language_pipeline()
                passage_graph_cache(store).get()
            except Exception as exc:  # noqa: BLE001 - an unreachable graph is reported by each run's status
                logger.warning("The graph is not ready yet: {reason}", reason=str(exc)[:200])

    def _embedding(self, query: str, query_embedding: list[float] | None) -> np.ndarray:
        if self._model is None:
            from components.embedding import get_embedding_model

            self._model = get_embedding_model(self.embedding_model)
        if query_embedding is not None and len(query_embedding) == self._model.dimension:
            return np.asarray(query_embedding, dtype=np.float32)
        # The question's embedding is cached per process: every branch shares one forward pass.
        return self._model.embed_one(query)

    def _relevance(self, hits: list[Any], query_vector: np.ndarray) -> list[float]:
        assert self._tools is not None
        store = self._tools.store
        # Fact embeddings are computed once, on the first question that finds the fact, and kept by the store.
        cached = store.fact_embeddings([hit.fact.uuid for hit in hits], self.embedding_model)
        missing = [hit for hit in hits if hit.fact.uuid not in cached]
        if missing:
            fresh = dict(
                zip([h.fact.uuid for h in missing], self._model.embed([h.fact.text for h in missing]), strict=True)
            )
            try:
                store.store_fact_embeddings(fresh, self.embedding_model)
            except Exception as exc:  # noqa: BLE001 - a cache that cannot be written must not fail the search
                logger.warning("Fact embeddings not kept: {reason}", reason=str(exc)[:200])
            cached.update(fresh)
        vectors = np.stack([np.asarray(cached[hit.fact.uuid], dtype=np.float32) for hit in hits])
        return [float(v) for v in vectors @ query_vector]

    def _passages(
        self, walked: list[WalkedPassage], query_vector: np.ndarray, filters: dict[str, Any] | None, as_of: str | None
    ) -> list[ContextChunk]:
        """The walked passages as knowledge-base chunks, in walk order: one query for all their documents, which
        also applies the knowledge base's filters and `as_of`."""
        if not walked:
            return []
        scope = parse_filters({k: v for k, v in (filters or {}).items() if k != "top_k"}, as_of)
        documents = list(dict.fromkeys(passage.document_id for passage in walked))
        if scope.document_ids:
            documents = [document for document in documents if document in scope.document_ids]
        if not documents:
            return []
        store = open_store(self.collection)
        limit = min(200, 4 * len(walked))
        hits = store.dense_search(query_vector, limit, replace(scope, document_ids=tuple(documents)))
        by_chunk = {hit.chunk.chunk_id: hit for hit in hits}
        best_of_document: dict[str, Any] = {}
        for hit in hits:  # best first: the document's nearest chunk stands for facts read without a chunk
            best_of_document.setdefault(hit.document.document_id, hit)
        chunks: list[ContextChunk] = []
        seen: set[str] = set()
        for passage in walked:
            hit = by_chunk.get(passage.chunk_id or "") or (
                best_of_document.get(passage.document_id) if passage.chunk_id is None else None
            )
            if hit is None or hit.chunk.chunk_id in seen:
                continue
            seen.add(hit.chunk.chunk_id)
            chunk = hit_to_chunk(hit, store, {SOURCE: len(chunks) + 1}, raw_score=passage.score,
                                 score_kind=ScoreKind.NONE)
            chunk.metadata["graph_walk_score"] = round(passage.score, 8)
            chunks.append(chunk)
        return chunks

    def _facts(
        self, seeds: dict[str, float], walked: list[WalkedPassage], query_vector: np.ndarray, as_of: str | None,
        filters: dict[str, Any] | None,
    ) -> list[ContextChunk]:
        """The best facts of the best-seeded entities, those read in the walk's best passages first."""
        if self.facts_k == 0 or not seeds:
            return []
        assert self._tools is not None
        entities = sorted(seeds, key=lambda uuid: -seeds[uuid])[:SEED_ENTITIES_FOR_FACTS]
        found = self._tools.store.best_entity_facts(
            entities, per_entity=FACTS_PER_ENTITY, as_of=parse_bound(as_of, "as_of", end=True)
        )
        scope = scope_from_filters(filters)
        walk_rank = {passage.chunk_id: rank for rank, passage in enumerate(walked) if passage.chunk_id}
        hits, seen = [], set()
        for entity in entities:
            for hit in found.get(entity, []):
                if hit.fact.uuid not in seen and (scope is None or scope.admits(hit.fact)):
                    seen.add(hit.fact.uuid)
                    hits.append(hit)
        hits.sort(key=lambda hit: walk_rank.get(hit.fact.chunk_id, len(walk_rank)))
        hits = hits[: self.facts_k]
        if not hits:
            return []
        relevance = self._relevance(hits, query_vector)
        chunks = []
        for hit, cosine in zip(hits, relevance, strict=True):
            chunk = fact_to_chunk(hit)
            chunk.semantic_relevance = max(0.0, min(1.0, cosine))
            chunks.append(chunk)
        return chunks

    def _search(
        self,
        query: str,
        query_embedding: list[float] | None,
        as_of: str | None,
        limit: int,
        filters: dict[str, Any] | None,
    ) -> SourceResult:
        self.warm_up()
        assert self._tools is not None
        graph = passage_graph_cache(self._tools.store).get()
        walked, seeds = graph.top_passages(query, limit, self.damping)
        if not seeds.weights:
            return SourceResult(chunks=[], total_found=0)
        query_vector = self._embedding(query, query_embedding)
        passages = self._passages(walked, query_vector, filters, as_of)
        facts = self._facts(seeds.weights, walked, query_vector, as_of, filters)
        for rank, chunk in enumerate(facts, start=len(passages) + 1):
            chunk.ranks[SOURCE] = rank
        return SourceResult(chunks=passages + facts, total_found=len(passages) + len(facts))

    def _prepare(self, query: str, as_of: str | None, filters: dict[str, Any] | None) -> tuple[str, str | None, int]:
        text = check_text(query, "query")
        parse_bound(as_of, "as_of", end=True)
        scope_from_filters(filters)  # a malformed date filter is an input error, said before any work
        limit = clamp((filters or {}).get("top_k", self.top_k), 1, 50, self.top_k)
        return text, as_of, limit

    @staticmethod
    def _skip(sources: list[str] | None) -> SourceStatus | None:
        if not source_selected(sources, SOURCE):
            return SourceStatus.skipped(SOURCE, "the graph was not among the selected sources")
        return None

    @staticmethod
    def _invalid(started: float, message: str) -> dict[str, Any]:
        return {"documents": [], "status": SourceStatus.refused(SOURCE, message, started)}

    @component.output_types(documents=list[Document], status=SourceStatus)
    def run(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        filters: dict[str, Any] | None = None,
        as_of: str | None = None,
        sources: list[str] | None = None,
    ) -> dict[str, Any]:
        """Passages and facts for `query`.

        :param filters: the knowledge base's filters (`doc_types`, `document_ids`, `date_from`/`date_to`) restrict
            the passages and the facts; `top_k` overrides the number of passages.
        :param as_of: ISO date; only documents dated by then and facts valid then (begun by it, not yet ended).
        :returns: `documents`: knowledge-base passages in walk order, then graph facts; `status`: the run's
            `SourceStatus`.
        """
        skipped = self._skip(sources)
        if skipped is not None:
            return {"documents": [], "status": skipped}
        started = time.monotonic()
        try:
            text, as_of, limit = self._prepare(query, as_of, filters)
        except ValueError as exc:
            return self._invalid(started, str(exc))
        result, status = self._guard.call(lambda: self._search(text, query_embedding, as_of, limit, filters))
        return result.outputs(status)

    @component.output_types(documents=list[Document], status=SourceStatus)
    async def run_async(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        filters: dict[str, Any] | None = None,
        as_of: str | None = None,
        sources: list[str] | None = None,
    ) -> dict[str, Any]:
        """`run` for `Pipeline.run_async`: the store query runs in a worker thread under the same policy."""
        skipped = self._skip(sources)
        if skipped is not None:
            return {"documents": [], "status": skipped}
        started = time.monotonic()
        try:
            text, as_of, limit = self._prepare(query, as_of, filters)
        except ValueError as exc:
            return self._invalid(started, str(exc))
        result, status = await self._guard.acall(lambda: self._search(text, query_embedding, as_of, limit, filters))
        return result.outputs(status)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            collection=self.collection,
            top_k=self.top_k,
            facts_k=self.facts_k,
            damping=self.damping,
            embedding_model=self.embedding_model,
            timeout_s=self.timeout_s,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GraphSearch:
        return default_from_dict(cls, data)
