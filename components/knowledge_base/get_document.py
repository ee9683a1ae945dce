"""`GetDocument`: one knowledge-base document with its chunks, under the tool contract."""

from __future__ import annotations

from typing import Any

from haystack import Document, component, default_from_dict

from components.contracts import SourceStatus, chunk_to_document
from components.knowledge_base.attribution import (
    KnowledgeBaseAccess,
    check_component_settings,
    check_document_store,
    document_to_dict,
    record_to_chunk,
)
from components.resilience import ResiliencePolicy, SourceError, SourceGuard, SourceResult
from components.serialization import init_parameters_to_dict


@component
class GetDocument:
    """Fetches a document of the knowledge base by id: its fields and text, and its chunks in order.

    `document_store` is the integration's store of the knowledge base (see `KnowledgeBaseSearch`); without one, the
    store `KB_BACKEND` chooses for `collection`.

    Usage:
    ```python
    get = GetDocument()
    result = get.run(document_id="3f2a...")
    result["document"]["title"], len(result["chunks"]), result["status"].status
    ```
    """

    def __init__(
        self,
        document_store: Any = None,
        collection: str | None = None,
        source_name: str = "kb_document",
        timeout_s: float | None = None,
    ) -> None:
        timeout_s = check_component_settings(collection, timeout_s)
        if not isinstance(source_name, str) or not source_name.strip():
            raise ValueError("source_name must be a non-empty name")
        self.document_store = check_document_store(document_store)
        self.collection = collection
        self.source_name = source_name
        self.timeout_s = timeout_s
        self._kb = KnowledgeBaseAccess(self.document_store, collection)

    def warm_up(self) -> None:
        """Open the knowledge base over the document store (a failure shows in the next run's status)."""
        self._kb.warm_up()

    @component.output_types(document=dict | None, chunks=list[Document], status=SourceStatus)
    def run(self, document_id: str) -> dict[str, Any]:
        """Fetch `document_id`.

        :returns: `document`: the document's fields, text and `chunk_count` (None when absent);
            `chunks`: its chunks as Documents in order; `status`: the `SourceStatus`. No such document is a
            success with `document` None and a status message that says so; an error status means the knowledge
            base could not be asked (so a caller can tell "not there" from "down").
        """
        found: dict[str, Any] = {}

        def work() -> SourceResult:
            key = document_id.strip() if isinstance(document_id, str) else ""
            if not key:
                raise SourceError("the document id is empty")
            store = self._kb.get()
            stored = store.get_document(key)
            if stored is None:
                found["missing"] = f"no document with id {key!r} in the knowledge base {store.collection!r}"
                return SourceResult(total_found=0)
            document, chunks = stored
            found["document"] = document_to_dict(document, len(chunks), include_text=True)
            return SourceResult(chunks=[record_to_chunk(document, chunk, len(chunks), store) for chunk in chunks])

        policy = ResiliencePolicy.from_settings(timeout_s=self.timeout_s)
        result, status = SourceGuard(self.source_name, policy).call(work)
        if status.ok and "missing" in found:
            status = status.model_copy(update={"message": found["missing"]})
        return {
            "document": found.get("document") if status.ok else None,
            "chunks": [chunk_to_document(chunk) for chunk in result.chunks],
            "status": status,
        }

    def to_dict(self) -> dict[str, Any]:
        """Serialise to a dict."""
        return init_parameters_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GetDocument:
        """Deserialise from a dict."""
        return default_from_dict(cls, data)
