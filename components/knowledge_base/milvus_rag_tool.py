"""`MilvusRagTool`: the seed's Milvus RAG tool contract over the Milvus knowledge base, under the tool contract."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict

from components.contracts import SourceStatus, StatusKind, chunk_to_document
from components.embedding import EmbeddingModel, get_embedding_model
from components.knowledge_base.attribution import check_component_settings, clamp_float, clamp_int, hit_to_chunk
from components.knowledge_base.rank_fusion import reciprocal_rank_fusion
from components.knowledge_base.store import (
    KnowledgeBaseMismatch,
    KnowledgeBaseStore,
    KnowledgeBaseUnavailable,
    SearchFilters,
    cosine_to_relevance,
)
from components.resilience import ResiliencePolicy, RetryableError, SourceError, SourceGuard, SourceResult
from components.resilience.guard import cache_key

MAX_QUERY_CHARS = 2000
MODES = ("dense", "hybrid")


def parse_date_range(value: Any) -> tuple[dt.date | None, dt.date | None]:
    """(start, end) of a `filter_date_range`: `{"start": ..., "end": ...}` (or `from`/`to`), or `[start, end]`.

    Raises `SourceError` with one sentence for anything else, a malformed date, or a start after the end.
    """
    if value is None:
        return None, None
    if isinstance(value, dict):
        unknown = sorted(str(key) for key in value if key not in ("start", "end", "from", "to"))
        if unknown:
            raise SourceError(f"filter_date_range takes start and end, not {', '.join(unknown)}")
        start, end = value.get("start", value.get("from")), value.get("end", value.get("to"))
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        start, end = value
    else:
        raise SourceError('filter_date_range must be {"start": "YYYY-MM-DD", "end": "YYYY-MM-DD"} or [start, end]')
    first, last = _date(start, "start"), _date(end, "end")
    if first and last and first > last:
        raise SourceError(f"filter_date_range starts ({first.isoformat()}) after it ends ({last.isoformat()})")
    return first, last


def _date(value: Any, name: str) -> dt.date | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, dt.date):
        return value if not isinstance(value, dt.datetime) else value.date()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            pass
    raise SourceError(f"filter_date_range {name} must be a date as YYYY-MM-DD, not {value!r}")


def _source_types(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set)) or not all(isinstance(item, str) for item in value):
        raise SourceError("filter_source_type must be a document type or a list of them (pdf, md, html, ...)")
    return tuple(item.strip().lower() for item in value if item.strip())


@component
class MilvusRagTool:
    """Semantic search of the Milvus knowledge base with the seed's RAG tool contract.

    `top_k` (clamped 1-50) chunks whose `semantic_relevance` (cosine to the question, 0-1, whether the collection
    uses the COSINE or the L2 metric) is at least `min_relevance` (clamped 0-1), optionally only of the document
    types `filter_source_type` and dated within `filter_date_range`. Every chunk carries `document_id`,
    `document_title`, `collection_name`, `chunk_index`, `embedding_model`, `similarity_score` (Milvus's raw score)
    and `document_total_chunks`. In `hybrid` mode the BM25 list is fused in (reciprocal rank fusion); if one of
    the two lists fails the other is returned with status `partial`. Never raises: problems come back in `status`.

    Usage:
    ```python
    tool = MilvusRagTool(top_k=5)
    result = tool.run(query="How does BM25 work in Milvus?", filter_source_type=["pdf"],
                      filter_date_range={"start": "2023-01-01", "end": "2024-12-31"})
    result["documents"], result["total_found"], result["execution_time_ms"], result["status"].status
    ```
    """

    def __init__(
        self,
        collection: str | None = None,
        top_k: int = 5,
        min_relevance: float = 0.0,
        mode: str = "dense",
        source_name: str = "kb_milvus",
        timeout_s: float | None = None,
    ) -> None:
        timeout_s = check_component_settings(collection, timeout_s)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if not isinstance(source_name, str) or not source_name.strip():
            raise ValueError("source_name must be a non-empty name")
        self.collection = collection
        self.top_k = clamp_int(top_k, 1, 50, "top_k")
        self.min_relevance = clamp_float(min_relevance, 0.0, 1.0, "min_relevance")
        self.mode = mode
        self.source_name = source_name
        self.timeout_s = timeout_s
        self._model: EmbeddingModel | None = None

    def warm_up(self) -> None:
        """Load the embedding model (shared per process) for questions that arrive without an embedding."""
        if self._model is None:
            self._model = get_embedding_model()

    def _store(self) -> KnowledgeBaseStore:
        from components.knowledge_base.factory import open_knowledge_base
        from components.settings import get_settings

        # The Milvus tool searches Milvus whatever KB_BACKEND says; the factory shares the instance.
        settings = get_settings().model_copy(update={"kb_backend": "milvus"})
        try:
            return open_knowledge_base(settings, self.collection)
        except KnowledgeBaseMismatch as exc:
            raise SourceError(str(exc)) from exc
        except KnowledgeBaseUnavailable as exc:
            raise RetryableError(str(exc), kind="connection") from exc

    def _work(
        self,
        query: str,
        query_embedding: list[float] | None,
        top_k: int | None,
        min_relevance: float | None,
        filter_source_type: Any,
        filter_date_range: Any,
    ) -> Any:
        def work() -> SourceResult:
            text = query.strip() if isinstance(query, str) else ""
            if not text:
                raise SourceError("the question is empty")
            if len(text) > MAX_QUERY_CHARS:
                raise SourceError(f"the question is longer than {MAX_QUERY_CHARS:,} characters")
            try:
                limit = self.top_k if top_k is None else clamp_int(top_k, 1, 50, "top_k")
                floor = (
                    self.min_relevance
                    if min_relevance is None
                    else clamp_float(min_relevance, 0.0, 1.0, "min_relevance")
                )
            except ValueError as exc:
                raise SourceError(str(exc)) from None
            start, end = parse_date_range(filter_date_range)
            filters = SearchFilters(doc_types=_source_types(filter_source_type), date_from=start, date_to=end)
            store = self._store()
            embedding = self._embedding(text, query_embedding)
            return self._search(store, text, embedding, limit, floor, filters)

        return work

    def _embedding(self, text: str, query_embedding: list[float] | None) -> np.ndarray:
        if query_embedding is not None and len(query_embedding) > 0:
            return np.asarray(query_embedding, dtype=np.float32)
        self.warm_up()
        assert self._model is not None
        return self._model.embed_one(text)

    def _search(
        self,
        store: KnowledgeBaseStore,
        text: str,
        embedding: np.ndarray,
        limit: int,
        floor: float,
        filters: SearchFilters,
    ) -> SourceResult:
        if self.mode == "dense":
            hits = store.dense_search(embedding, limit, filters)
            chunks = [
                hit_to_chunk(hit, store, {self.source_name: rank})
                for rank, hit in enumerate((h for h in hits if cosine_to_relevance(h.cosine) >= floor), start=1)
            ]
            return SourceResult(chunks=chunks, total_found=len(chunks))
        depth = min(100, max(2 * limit, 20))
        lists, failures = {}, []
        for name, search in (
            ("dense", lambda: store.dense_search(embedding, depth, filters)),
            ("keyword", lambda: store.keyword_search(text, depth, filters, query_embedding=embedding)),
        ):
            try:
                lists[name] = search()
            except ValueError:
                raise
            except Exception as exc:  # noqa: BLE001 - one failed list still leaves an answer (partial)
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                failures.append(f"{name} search failed: {reason}")
        if not lists:
            raise RetryableError("; ".join(failures), kind="connection")
        best: dict[str, Any] = {}
        for hits in lists.values():
            for hit in hits:
                best.setdefault(hit.chunk.chunk_id, hit)
        scores = reciprocal_rank_fusion([[hit.chunk.chunk_id for hit in hits] for hits in lists.values()])
        kept = [
            best[chunk_id]
            for chunk_id in sorted(scores, key=lambda key: (-scores[key], key))
            if cosine_to_relevance(best[chunk_id].cosine) >= floor
        ]
        chunks = [hit_to_chunk(hit, store, {self.source_name: rank}) for rank, hit in enumerate(kept[:limit], start=1)]
        return SourceResult(chunks=chunks, total_found=len(kept), partial="; ".join(failures) or None)

    @staticmethod
    def _output(result: SourceResult, status: SourceStatus) -> dict[str, Any]:
        return {
            "documents": [chunk_to_document(chunk) for chunk in result.chunks],
            "total_found": status.total_found if status.status in (StatusKind.SUCCESS, StatusKind.PARTIAL) else 0,
            "execution_time_ms": status.execution_time_ms,
            "status": status,
        }

    def _guard(self) -> SourceGuard:
        return SourceGuard(self.source_name, ResiliencePolicy.from_settings(timeout_s=self.timeout_s))

    @component.output_types(documents=list[Document], total_found=int, execution_time_ms=float, status=SourceStatus)
    def run(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        top_k: int | None = None,
        min_relevance: float | None = None,
        filter_source_type: list[str] | None = None,
        filter_date_range: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Search Milvus for `query`.

        :param query: the question (1-2,000 characters).
        :param query_embedding: the question's embedding; computed here when absent.
        :param top_k: chunks to return (clamped 1-50); default the component's.
        :param min_relevance: lowest `semantic_relevance` kept (clamped 0-1); default the component's.
        :param filter_source_type: document types to keep (`pdf`, `md`, `html`, `web`, `arxiv`, ...).
        :param filter_date_range: `{"start": "YYYY-MM-DD", "end": "YYYY-MM-DD"}` (inclusive; either may be absent).
        :returns: `documents`: the chunks as Documents (meta per `ContextChunk`), best first; `total_found`: chunks
            that passed the filters and the relevance floor; `execution_time_ms`: the call's time;
            `status`: the `SourceStatus` (success, partial, timeout or error).
        """
        work = self._work(query, query_embedding, top_k, min_relevance, filter_source_type, filter_date_range)
        key = cache_key(
            self.source_name,
            self.mode,
            self.collection,
            query,
            top_k,
            min_relevance,
            filter_source_type,
            filter_date_range,
        )
        result, status = self._guard().call(work, key=key)
        return self._output(result, status)

    @component.output_types(documents=list[Document], total_found=int, execution_time_ms=float, status=SourceStatus)
    async def run_async(
        self,
        query: str,
        query_embedding: list[float] | None = None,
        top_k: int | None = None,
        min_relevance: float | None = None,
        filter_source_type: list[str] | None = None,
        filter_date_range: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """`run` for `Pipeline.run_async`: same parameters and outputs; the search runs in a worker thread."""
        work = self._work(query, query_embedding, top_k, min_relevance, filter_source_type, filter_date_range)
        key = cache_key(
            self.source_name,
            self.mode,
            self.collection,
            query,
            top_k,
            min_relevance,
            filter_source_type,
            filter_date_range,
        )
        result, status = await self._guard().acall(work, key=key)
        return self._output(result, status)

    def to_dict(self) -> dict[str, Any]:
        """Serialise to a dict."""
        return default_to_dict(
            self,
            collection=self.collection,
            top_k=self.top_k,
            min_relevance=self.min_relevance,
            mode=self.mode,
            source_name=self.source_name,
            timeout_s=self.timeout_s,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MilvusRagTool:
        """Deserialise from a dict."""
        return default_from_dict(cls, data)
