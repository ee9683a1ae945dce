"""Hayhooks wrapper listing the knowledge base: `POST /documents/run` and the MCP tool `documents`."""

from __future__ import annotations

from pydantic import StrictInt  # a JSON true is not the number 1

from pipelines.serving.catalog_wrapper import CatalogPipelineWrapper, InvalidRequest, as_payload
from pipelines.serving.models import DocumentPage, ResearchFilters, summary_from

MAX_OFFSET = 10**9


class PipelineWrapper(CatalogPipelineWrapper):
    """A page of the document list, newest first, optionally searched by title or source."""

    pipeline_name = "documents"

    def run_api(
        self,
        search: str | None = None,
        limit: StrictInt = 20,
        offset: StrictInt = 0,
        filters: ResearchFilters | None = None,
    ) -> DocumentPage:
        """List the documents of the knowledge base, newest first.

        :param search: Only documents whose title or source contains this text.
        :param limit: Documents per page (1-100).
        :param offset: Documents to skip (for the next pages; 0-1,000,000,000).
        :param filters: Only documents of these types, dates or ids.
        :returns: The page of documents with their chunk counts, and how many match in all.
        """
        if not 1 <= limit <= 100:
            raise InvalidRequest("limit must be between 1 and 100")
        if not 0 <= offset <= MAX_OFFSET:  # a larger one would overflow PostgreSQL's bigint
            raise InvalidRequest(f"offset must be between 0 and {MAX_OFFSET:,}")
        search = search.strip() if search and search.strip() else None
        restrict = ResearchFilters.model_validate(filters).to_catalog() if filters is not None else None
        outputs = self.run_catalog({"search": search, "limit": limit, "offset": offset, "filters": restrict})
        self.raise_for_status(outputs.get("status"))
        documents = [summary_from(item) for item in outputs.get("documents") or []]
        page = DocumentPage(documents=documents, total=int(outputs.get("total") or 0), limit=limit, offset=offset)
        return as_payload(page)
