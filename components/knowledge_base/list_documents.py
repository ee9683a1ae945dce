"""`ListDocuments`: a page of the knowledge base's documents with chunk counts, under the tool contract."""

from __future__ import annotations

from typing import Any

from haystack import component

from components.contracts import SourceStatus
from components.knowledge_base.attribution import KnowledgeBaseComponent, document_to_dict, parse_filters
from components.resilience import SourceError, SourceResult
from components.validation import clamp


@component
class ListDocuments(KnowledgeBaseComponent):
    """Lists the knowledge base's documents, newest first, with how many chunks each has (`run` says how to page,
    search and filter them).

    Usage:
    ```python
    listing = ListDocuments()
    page = listing.run(limit=20, offset=0, search="annual report")
    page["total"], [d["title"] for d in page["documents"]]
    ```
    """

    SOURCE_NAME = "kb_documents"
    CHECKS_TEXT_ANALYSIS = False  # never keyword-searches: a base another analysis indexed is still read

    @component.output_types(documents=list[dict], total=int, status=SourceStatus)
    def run(
        self, limit: int = 20, offset: int = 0, search: str | None = None, filters: dict | None = None
    ) -> dict[str, Any]:
        """List one page of documents.

        :param limit: documents per page (clamped 1-100).
        :param offset: documents to skip (at least 0).
        :param search: a substring of the title or source, or None for all.
        :param filters: `doc_types`, `date_from`, `date_to` (YYYY-MM-DD, inclusive), `document_ids`.
        :returns: `documents`: the page (each with `chunk_count`); `total`: how many match in all;
            `status`: the `SourceStatus`.
        """
        page: dict[str, Any] = {"documents": [], "total": 0}

        def work() -> SourceResult:
            try:
                size = clamp(limit, 1, 100, "limit")
                skip = clamp(offset, 0, 2**31 - 1, "offset")
            except ValueError as exc:
                raise SourceError(str(exc)) from exc
            if search is not None and not isinstance(search, str):
                raise SourceError("search must be text")
            if search is not None and len(search) > 2000:
                raise SourceError("the search text is longer than 2,000 characters")
            search_filters = parse_filters(filters)
            store = self._kb.get()
            summaries, total = store.list_documents(size, skip, search, search_filters)
            page["documents"] = [document_to_dict(item.document, item.chunk_count) for item in summaries]
            page["total"] = total
            return SourceResult(total_found=total)

        _, status = self._guard().call(work)
        return {**(page if status.ok else {"documents": [], "total": 0}), "status": status}
