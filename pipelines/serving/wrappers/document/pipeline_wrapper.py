"""Hayhooks wrapper looking up one document: `POST /document/run` and the MCP tool `document`."""

from __future__ import annotations

from fastapi import HTTPException

from pipelines.serving.catalog_wrapper import CatalogPipelineWrapper, as_payload, require_text
from pipelines.serving.models import DocumentDetail, chunk_from, summary_from


class PipelineWrapper(CatalogPipelineWrapper):
    """One document of the knowledge base with its chunks in order."""

    pipeline_name = "document"

    def run_api(self, document_id: str) -> DocumentDetail:
        """Look up one document of the knowledge base by its id, with its chunks in order.

        :param document_id: The document's id (as listed by the documents tool or cited by a research answer).
        :returns: The document's title, source, type, date and metadata, and its chunks.
        """
        document_id = require_text(document_id, "document_id", max_chars=200)
        outputs = self.run_catalog({"document_id": document_id})
        self.raise_for_status(outputs.get("status"))
        document = outputs.get("document")
        if document is None:
            raise HTTPException(status_code=404, detail=f"No document with id {document_id!r}")
        detail = DocumentDetail(
            document=summary_from(document), chunks=[chunk_from(chunk) for chunk in outputs.get("chunks") or []]
        )
        return as_payload(detail)
