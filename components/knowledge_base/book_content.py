"""`BookContentRetriever`: the seed's `retrieve_book_content` tool over the Qdrant knowledge base."""

from __future__ import annotations

from typing import Any

from haystack import Document, component

from components.contracts import SourceStatus, StatusKind
from components.embedding import get_embedding_model, query_vector
from components.knowledge_base.attribution import KnowledgeBaseComponent, ranked_chunks
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.resilience import RetryableError, SourceError, SourceResult
from components.validation import bounded_text, clamp

MAX_QUERY_CHARS = 1000
NO_RESULTS = "No relevant content found"
CONNECTION_ERROR = "CONNECTION_ERROR"
AUTH_ERROR = "AUTH_ERROR"
INVALID_QUERY = "INVALID_QUERY"
TIMEOUT_ERROR = "TIMEOUT_ERROR"
# The attribution fields a result's `metadata` carries (besides `source_title` and `source_date`).
_RESULT_METADATA = (
    "document_id",
    "document_title",
    "chunk_index",
    "document_total_chunks",
    "collection_name",
    "embedding_model",
    "doc_type",
)


class _Refused(SourceError):
    """Bad input or credentials: not retried, and its code is kept for the tool's error."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def _raise_if_refused_key(exc: BaseException) -> None:
    """Raise the tool's AUTH_ERROR when a client error in the cause chain carries HTTP 401 or 403 (Qdrant's client
    sets `status_code`)."""
    seen: BaseException | None = exc
    while seen is not None:
        code = getattr(seen, "status_code", None)
        if code in (401, 403):
            raise _Refused(f"Qdrant refused the API key (HTTP {code}); check QDRANT_API_KEY", AUTH_ERROR) from exc
        seen = seen.__cause__ or seen.__context__


@component
class BookContentRetriever(KnowledgeBaseComponent):
    """Finds passages of the books and documents in the Qdrant knowledge base: the `retrieve_book_content` tool.

    `query` (1-1,000 characters) is embedded with the local model; the `top_k` (clamped 1-10, default 5) nearest
    chunks whose score (cosine similarity, 0-1) is at least `min_score` (clamped 0-1, default 0.5) come back with
    `id`, `content`, `score`, `source_url`, `page_number`, `section_title` and `metadata`, plus the
    `query_embedding_used`. Errors are `{"error": ..., "code": "CONNECTION_ERROR" | "AUTH_ERROR" | "INVALID_QUERY" |
    "TIMEOUT_ERROR"}`; nothing above the floor is `{"results": [], "message": "No relevant content found"}`.
    Thread-safe: one instance serves concurrent calls (the store, the model and the guard are shared and locked).

    `document_store` is the integration's store of the books; without one, the Qdrant store of `collection` (the
    seed's tool reads Qdrant whatever `KB_BACKEND` says).

    Usage:
    ```python
    books = BookContentRetriever()
    books.run(query="What is a sourdough starter?", top_k=3)["result"]["results"][0]["page_number"]
    ```
    """

    SOURCE_NAME = "kb_books"
    BACKEND = "qdrant"

    def __init__(
        self,
        document_store: Any = None,
        collection: str | None = None,
        top_k: int = 5,
        min_score: float = 0.5,
        source_name: str | None = None,
        timeout_s: float | None = None,
        document_field: str | None = None,
    ) -> None:
        KnowledgeBaseComponent.__init__(
            self, document_store, collection, source_name, timeout_s, document_field=document_field
        )
        self.top_k = clamp(top_k, 1, 10, "top_k")
        self.min_score = clamp(min_score, 0.0, 1.0, "min_score")

    def warm_up(self) -> None:
        """Load the embedding model (once per process) and open the knowledge base; safe from several threads. A
        knowledge base that cannot be opened yet is reported by each call instead."""
        get_embedding_model()
        KnowledgeBaseComponent.warm_up(self)

    def _store(self) -> KnowledgeBase:
        try:
            return self._kb.get()
        except RetryableError as exc:
            _raise_if_refused_key(exc)
            raise
        except SourceError as exc:  # a store of another kind or shape
            raise _Refused(str(exc), INVALID_QUERY) from exc

    def _retrieve(self, query: Any, top_k: Any, min_score: Any, used: dict[str, Any]) -> SourceResult:
        try:
            text = bounded_text("query", query, MAX_QUERY_CHARS)
            limit = clamp(self.top_k if top_k is None else top_k, 1, 10, "top_k")
            floor = clamp(self.min_score if min_score is None else min_score, 0.0, 1.0, "min_score")
        except ValueError as exc:
            raise _Refused(str(exc), INVALID_QUERY) from None
        store = self._store()
        embedding = query_vector(text)
        used["embedding"] = embedding.tolist()
        try:
            hits = store.dense_search(embedding, limit)
        except Exception as exc:  # noqa: BLE001 - classified, so the tool can name the fault
            _raise_if_refused_key(exc)
            raise
        chunks = ranked_chunks(hits, store, floor, self.source_name)
        return SourceResult(chunks=chunks, total_found=len(chunks))

    @staticmethod
    def _result(result: SourceResult, status: SourceStatus, used: dict[str, Any], fault: dict[str, str]) -> dict:
        if status.status not in (StatusKind.SUCCESS, StatusKind.PARTIAL):
            timed_out = status.status is StatusKind.TIMEOUT
            code = fault.get("code") or (TIMEOUT_ERROR if timed_out else CONNECTION_ERROR)  # else: unreachable, paused
            return {"error": status.message or "the knowledge base could not be searched", "code": code}
        if not result.chunks:
            return {"results": [], "message": NO_RESULTS, "query_embedding_used": used.get("embedding", [])}
        results = [
            {
                "id": chunk.id,
                "content": chunk.text,
                "score": round(chunk.semantic_relevance, 6),
                "source_url": chunk.source_url or chunk.metadata.get("source") or None,
                "page_number": chunk.metadata.get("page_number"),
                "section_title": chunk.metadata.get("section_title"),
                "metadata": {key: chunk.metadata[key] for key in _RESULT_METADATA if key in chunk.metadata}
                | {
                    "source_title": chunk.source_title,
                    "source_date": chunk.source_date.isoformat() if chunk.source_date else None,
                },
            }
            for chunk in result.chunks
        ]
        return {"results": results, "query_embedding_used": used.get("embedding", [])}

    @component.output_types(result=dict, documents=list[Document], status=SourceStatus)
    def run(self, query: str, top_k: int | None = None, min_score: float | None = None) -> dict[str, Any]:
        """Retrieve book content for `query`.

        :param query: what to look for (required, 1-1,000 characters).
        :param top_k: passages to return (clamped 1-10); default 5.
        :param min_score: lowest score kept (clamped 0-1); default 0.5.
        :returns: `result`: the tool's JSON answer (results, an empty-result message, or an error with its code);
            `documents`: the passages as Documents (meta per `ContextChunk`); `status`: the `SourceStatus`.
        """
        used: dict[str, Any] = {}
        fault: dict[str, str] = {}

        def work() -> SourceResult:
            try:
                return self._retrieve(query, top_k, min_score, used)
            except _Refused as exc:
                fault["code"] = exc.code
                raise

        result, status = self._guard().call(work)
        return {"result": self._result(result, status, used, fault), **result.outputs(status)}
