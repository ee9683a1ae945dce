"""`GetDocument`: one knowledge-base document with its chunks, under the tool contract."""

from __future__ import annotations

from typing import Any

from haystack import Document, component

from components.contracts import SourceStatus, chunk_to_document
from components.knowledge_base.attribution import KnowledgeBaseComponent, document_to_dict, record_to_chunk
from components.resilience import SourceError, SourceResult


@component
class GetDocument(KnowledgeBaseComponent):
    """Fetches a document of the knowledge base by id: its fields and text, and its chunks in order.

    Usage:
    ```python
    get = GetDocument()
    result = get.run(document_id="3f2a...")
    result["document"]["title"], len(result["chunks"]), result["status"].status
    ```
    """

    SOURCE_NAME = "kb_document"
    CHECKS_TEXT_ANALYSIS = False  # never keyword-searches: a base another analysis indexed is still read

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

        result, status = self._guard().call(work)
        if status.ok and "missing" in found:
            status = status.changed(message=found["missing"])
        return {
            "document": found.get("document") if status.ok else None,
            "chunks": [chunk_to_document(chunk) for chunk in result.chunks],
            "status": status,
        }
