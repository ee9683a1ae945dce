"""`GraphSearch`: the research pipeline's graph branch — facts about the entities a question names."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict, logging

from components.contracts import SourceStatus, source_selected
from components.graph.tools import GraphTools, check_text, clamp, fact_to_chunk, parse_bound, scope_from_filters
from components.resilience import ResiliencePolicy, SourceGuard, SourceResult
from components.settings import DEFAULT_EMBEDDING_MODEL

logger = logging.getLogger(__name__)

SOURCE = "graph"


@component
class GraphSearch:
    """Finds knowledge-graph facts for a question (entities it names, then full text), as `graph` chunks.

    Each fact is one sentence with its `valid_at`/`invalid_at`, its entities and its document, chunk and sentence.
    `as_of` keeps only facts valid at that date. With a query embedding, `semantic_relevance` is the cosine of the
    fact's sentence to the question on the local model, so graph facts rank fairly against every other source.

    Usage:
    ```python
    search = GraphSearch(top_k=10)
    search.warm_up()
    result = search.run(query="What happened to Airbus in 2019?", as_of="2020-01-01")
    result["documents"], result["status"]
    ```
    """

    def __init__(
        self,
        collection: str | None = None,
        top_k: int = 10,
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
        timeout_s: float | None = None,
    ) -> None:
        if collection is not None and not collection.strip():
            raise ValueError("collection must name the knowledge base's collection, or be None for the settings' one")
        if not isinstance(top_k, int) or not 1 <= top_k <= 50:
            raise ValueError(f"top_k must be an integer between 1 and 50, not {top_k!r}")
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.collection = collection
        self.top_k = top_k
        self.embedding_model = embedding_model
        self.timeout_s = timeout_s
        self._guard = SourceGuard(SOURCE, ResiliencePolicy.from_settings(timeout_s=timeout_s))
        self._tools: GraphTools | None = None
        self._model: Any = None

    def warm_up(self) -> None:
        """Open the graph store and reach its backend once, so the first question does not pay for it."""
        if self._tools is None:
            from components.graph.factory import open_graph_store

            store = open_graph_store(self.collection)
            self._tools = GraphTools(store)
            try:
                getattr(store, "ensure_schema", lambda: None)()
            except Exception as exc:  # noqa: BLE001 - an unreachable graph is reported by each run's status
                logger.warning("The graph is not reachable yet: {reason}", reason=str(exc)[:200])

    def _relevance(self, hits: list[Any], query_embedding: list[float] | None) -> list[float] | None:
        if query_embedding is None or len(query_embedding) == 0 or not hits:
            return None
        if self._model is None:
            from components.embedding import get_embedding_model

            self._model = get_embedding_model(self.embedding_model)
        if len(query_embedding) != self._model.dimension:
            return None
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
        return [float(v) for v in vectors @ np.asarray(query_embedding, dtype=np.float32)]

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
        hits = self._tools.search_hits(query, limit, as_of, filters)
        if query_embedding is None and hits:
            # The question's embedding is cached per process: every branch shares one forward pass.
            if self._model is None:
                from components.embedding import get_embedding_model

                self._model = get_embedding_model(self.embedding_model)
            query_embedding = self._model.embed_one(query)
        relevance = self._relevance(hits, query_embedding)
        chunks = []
        for index, hit in enumerate(hits):
            chunk = fact_to_chunk(hit)
            if relevance is not None:
                chunk.raw_score = hit.score
                chunk.semantic_relevance = max(0.0, min(1.0, relevance[index]))
            chunks.append(chunk)
        chunks.sort(key=lambda chunk: chunk.semantic_relevance, reverse=True)
        for rank, chunk in enumerate(chunks, start=1):
            chunk.ranks[SOURCE] = rank
        return SourceResult(chunks=chunks)

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
        """Facts for `query`.

        :param filters: the knowledge base's filters: `document_ids`, `date_from`/`date_to` (the documents' dates)
            restrict the facts too; `top_k` overrides the number of facts.
        :param as_of: ISO date; only facts valid then (begun by it, not yet ended).
        :returns: `documents`: graph facts as Documents, most relevant first; `status`: the run's `SourceStatus`.
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
            embedding_model=self.embedding_model,
            timeout_s=self.timeout_s,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GraphSearch:
        return default_from_dict(cls, data)
