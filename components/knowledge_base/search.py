"""`KnowledgeBaseSearch`: dense, keyword or hybrid search of the knowledge base, under the tool contract."""

from __future__ import annotations

import datetime as dt
import functools
import inspect
from dataclasses import replace
from typing import Any

from haystack import component, logging

from components.contracts import SOURCE_OUTPUTS, ContextChunk, ScoreKind, SourceStatus, source_selected
from components.embedding import get_embedding_model, query_vector
from components.knowledge_base.attribution import (
    KnowledgeBaseComponent,
    hit_to_chunk,
    parse_filters,
    ranked_chunks,
)
from components.knowledge_base.rank_fusion import reciprocal_rank_fusion
from components.knowledge_base.store import ChunkHit, SearchFilters, cosine_to_relevance
from components.resilience import SourceError, SourceResult
from components.resilience.guard import BreakerPolicy, cache_key
from components.serialization import init_parameters_to_dict
from components.settings import setting_or
from components.text.language import use_language_pipeline
from components.validation import bounded_text, clamp

logger = logging.getLogger(__name__)

MODES = ("dense", "keyword", "hybrid")
MAX_QUERY_CHARS = 2000


@component
class KnowledgeBaseSearch(KnowledgeBaseComponent):
    """Finds the knowledge-base chunks that answer a question, with full attribution and uniform relevance.

    `dense` orders by cosine similarity to the query embedding, `keyword` by full-text rank over the question's
    terms (any of them), `hybrid` fuses both by weighted reciprocal rank fusion (k=60; keyword weight
    `text_weight`). Every chunk's `semantic_relevance` is its cosine similarity to the query, whatever the mode.
    The search never raises: problems come back in `status`.

    `document_store` is the integration's store the chunks are in (`PgvectorDocumentStore`, `QdrantDocumentStore`,
    `MilvusDocumentStore`), as Haystack's own retrievers take it; the knowledge base over it (with the document
    registry beside it) is built in `warm_up()`. Without one, the store `KB_BACKEND` chooses for `collection`.

    Usage:
    ```python
    store = PgvectorDocumentStore(table_name="research", embedding_dimension=384)
    search = KnowledgeBaseSearch(document_store=store, mode="hybrid", limit=5)
    search.warm_up()
    result = search.run(query="How does HNSW indexing work?", filters={"doc_types": ["pdf"]})
    result["documents"], result["status"].status
    ```
    """

    SOURCE = "kb"  # the name a caller selects this branch by (`sources`); statuses name it `source_name`

    def __init__(
        self,
        document_store: Any = None,
        mode: str = "dense",
        collection: str | None = None,
        limit: int = 10,
        min_relevance: float = 0.0,
        text_weight: float = 0.5,
        source_name: str | None = None,
        timeout_s: float | None = None,
        breaker: BreakerPolicy | dict[str, Any] | None = None,
        cache_ttl_s: float | None = None,
        embedding_model: str | None = None,
        spacy_model: str | None = None,
        document_field: str | None = None,
        keyword_index_max_postings: int | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        source_name = f"kb_{mode}" if source_name is None else source_name
        KnowledgeBaseComponent.__init__(
            self,
            document_store,
            collection,
            source_name,
            timeout_s,
            breaker,
            embedding_model,
            document_field,
        )
        # Results cached for this long (0: not at all; None: CACHE_TTL_S as the search is built).
        self.cache_ttl_s = float(setting_or(cache_ttl_s, "cache_ttl_s"))
        self._policy = replace(self._policy, cache_ttl_s=self.cache_ttl_s)
        # Keyword search on pgvector scores in an in-memory copy of the postings while the knowledge base holds at
        # most this many (0: always on the database; None: KEYWORD_INDEX_MAX_POSTINGS as the search is built).
        if keyword_index_max_postings is not None and (
            isinstance(keyword_index_max_postings, bool)
            or not isinstance(keyword_index_max_postings, int)
            or keyword_index_max_postings < 0
        ):
            raise ValueError("keyword_index_max_postings must be a whole number of postings, 0 or more (0: off)")
        self.keyword_index_max_postings = int(setting_or(keyword_index_max_postings, "keyword_index_max_postings"))
        self._kb.keyword_index_max_postings = self.keyword_index_max_postings
        # The spaCy pipeline whose lemmas a question's keywords are read with (None: SPACY_MODEL as it is built).
        self.spacy_model = setting_or(spacy_model, "spacy_model")
        # The tool contract clamps silently.
        self.limit = clamp(limit, 1, 50, "limit")
        self.min_relevance = clamp(min_relevance, 0.0, 1.0, "min_relevance")
        self.text_weight = clamp(text_weight, 0.0, 1.0, "text_weight")
        # Cached answers are per knowledge base: the store's serialised form names its backend and collection.
        self._store_key = repr(init_parameters_to_dict(self)["init_parameters"]["document_store"])

    def warm_up(self) -> None:
        """Open the knowledge base over the document store, start loading the in-memory keyword index (pgvector, in
        the background), and load the embedding model (shared per process) for questions that arrive without an
        embedding."""
        use_language_pipeline(self.spacy_model)  # first: the knowledge base checks which analysis counted its terms
        KnowledgeBaseComponent.warm_up(self)
        if self.mode != "dense":
            self._kb.warm_keyword()
        get_embedding_model(self.embedding_model)

    # -- the work -----------------------------------------------------------------------------------------------

    def _plan(
        self,
        query: str,
        query_embedding: list[float] | None,
        limit: int | None,
        min_relevance: float | None,
        text_weight: float | None,
        filters: dict | None,
        as_of: str | dt.date | None,
    ) -> tuple[Any, str | None]:
        """The guarded work for one question and its cache key; a bad question or parameter is a work that refuses
        (so it surfaces as the source's status)."""
        try:
            text = bounded_text("the question", query, MAX_QUERY_CHARS)
            limit_n = self.limit if limit is None else clamp(limit, 1, 50, "limit")
            floor = self.min_relevance if min_relevance is None else clamp(min_relevance, 0.0, 1.0, "min_relevance")
            weight = self.text_weight if text_weight is None else clamp(text_weight, 0.0, 1.0, "text_weight")
        except ValueError as exc:
            message = str(exc)

            def refuse() -> SourceResult:
                raise SourceError(message)

            return refuse, None
        key = cache_key(
            self.source_name, self.mode, self._store_key, self.collection, text, limit_n, floor, weight, filters, as_of
        )

        def work() -> SourceResult:
            search_filters = parse_filters(filters, as_of)
            store = self._kb.get()
            chunks = self._search(store, text, query_embedding, limit_n, floor, weight, search_filters)
            return SourceResult(chunks=chunks, total_found=len(chunks))

        return work, key

    def _search(
        self,
        store: Any,
        text: str,
        query_embedding: list[float] | None,
        limit: int,
        floor: float,
        weight: float,
        filters: SearchFilters,
    ) -> list[ContextChunk]:
        if self.mode == "dense":
            hits = store.dense_search(query_vector(text, query_embedding, self.embedding_model), limit, filters)
            return ranked_chunks(hits, store, floor, self.source_name)
        # The question is embedded first (once per question: the branches share the model's cache), and the keyword
        # query takes the embedding, so the cosines of what it finds come in the same statement. Starting the
        # full-text query before the embedding saved nothing on a shared two-core machine: the query's own CPU slowed
        # the forward pass by about as much as it overlapped, and the cosines then cost a second round trip.
        depth = limit if self.mode == "keyword" else min(100, max(2 * limit, 20))
        embedding = query_vector(text, query_embedding, self.embedding_model)
        dense = store.dense_search(embedding, depth, filters) if self.mode == "hybrid" else []
        keyword = store.keyword_search(text, depth, filters, query_embedding=embedding)
        if self.mode == "keyword":
            return ranked_chunks(keyword, store, floor, self.source_name)
        # Hybrid fuses deeper lists than asked for, so a chunk second-best in both can still win.
        return self._fused(store, dense, keyword, limit, floor, weight)

    def _fused(
        self, store: Any, dense: list[ChunkHit], keyword: list[ChunkHit], limit: int, floor: float, weight: float
    ) -> list[ContextChunk]:
        best: dict[str, ChunkHit] = {}
        ranks: dict[str, dict[str, int]] = {}
        for name, hits in (("dense", dense), ("keyword", keyword)):
            for rank, hit in enumerate(hits, start=1):
                best.setdefault(hit.chunk.chunk_id, hit)
                ranks.setdefault(hit.chunk.chunk_id, {})[f"{self.source_name}_{name}"] = rank
        scores = reciprocal_rank_fusion(
            [[hit.chunk.chunk_id for hit in dense], [hit.chunk.chunk_id for hit in keyword]], [1.0 - weight, weight]
        )
        order = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))
        chunks: list[ContextChunk] = []
        for chunk_id in order:
            hit = best[chunk_id]
            if cosine_to_relevance(hit.cosine) < floor:
                continue
            chunk_ranks = {self.source_name: len(chunks) + 1, **ranks[chunk_id]}
            chunks.append(hit_to_chunk(hit, store, chunk_ranks, raw_score=scores[chunk_id], score_kind=ScoreKind.RRF))
            if len(chunks) == limit:
                break
        return chunks

    @component.output_types(**SOURCE_OUTPUTS)
    def run(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        limit: int | None = None,
        min_relevance: float | None = None,
        text_weight: float | None = None,
        filters: dict | None = None,
        as_of: str | dt.date | None = None,
        sources: list[str] | None = None,
    ) -> dict[str, Any]:
        """Search the knowledge base for `query`.

        :param query: the analyst's question (1-2,000 characters).
        :param query_embedding: the question's embedding; computed here when absent.
        :param limit: chunks to return (clamped 1-50); default the component's.
        :param min_relevance: drop chunks whose semantic relevance is below this (clamped 0-1).
        :param text_weight: keyword weight in hybrid fusion (clamped 0-1); dense gets the rest.
        :param filters: `doc_types`, `date_from`, `date_to` (YYYY-MM-DD, inclusive), `document_ids`.
        :param as_of: a YYYY-MM-DD date; only documents dated on or before it are searched.
        :param sources: the sources selected for this question; without "kb" or "auto" nothing runs.
        :returns: `documents`: the chunks as Documents (meta per `ContextChunk`), best first;
            `status`: this source's `SourceStatus`; `branch`: the same documents as the ranker's `BranchDocuments`.
        """
        plan, key = self._request(
            sources,
            query=query,
            query_embedding=query_embedding,
            limit=limit,
            min_relevance=min_relevance,
            text_weight=text_weight,
            filters=filters,
            as_of=as_of,
        )
        return self._guard().outputs(plan, key=key, branch=True)

    @functools.wraps(run)
    async def run_async(self, **arguments: Any) -> dict[str, Any]:
        """`run` for `Pipeline.run_async`: the search runs in the guard's worker thread, awaited on the event loop
        (no second thread waits for it); a knowledge base that was not selected answers at once."""
        call = inspect.signature(self.run).bind(**arguments)  # `run`'s defaults for what the caller left out
        call.apply_defaults()
        plan, key = self._request(**call.arguments)
        return await self._guard().outputs_async(plan, key=key, branch=True)

    def _request(self, sources: list[str] | None = None, **arguments: Any) -> tuple[Any, str | None]:
        """`_plan` for the other arguments of `run`, or the skipped status when the knowledge base is not selected."""
        if not source_selected(sources, self.SOURCE):
            return SourceStatus.skipped(self.source_name, "the knowledge base was not selected"), None
        return self._plan(**arguments)
