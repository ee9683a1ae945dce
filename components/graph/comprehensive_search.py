"""`ComprehensiveSearch`: vector and graph search for one question in parallel, surviving either's failure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haystack import Document, component

from components.contracts import ContextChunk, SourceStatus, StatusKind, document_to_chunk
from components.graph.factory import component_graph_store
from components.graph.tools import GraphToolComponent, GraphTools, fact_to_chunk
from components.knowledge_base.search import KnowledgeBaseSearch
from components.resilience import SourceResult
from components.resilience.errors import first_line
from components.serialization import with_base_parameters


def knowledge_base_vector_search(collection: str | None, mode: str) -> Callable[[str, int], list[ContextChunk]]:
    """A `(query, limit) -> chunks` function over the knowledge base's own search component."""
    search = KnowledgeBaseSearch(mode=mode, limit=50, **({"collection": collection} if collection else {}))
    search.warm_up()

    def run(query: str, limit: int) -> list[ContextChunk]:
        output = search.run(query=query, limit=limit)
        if not output["status"].ok:
            status = output["status"]
            raise RuntimeError(status.message or f"the knowledge base search ended with {status.status.value}")
        return [document_to_chunk(document) for document in output["documents"][:limit]]

    return run


@component
class ComprehensiveSearch(GraphToolComponent):
    """`perform_comprehensive_search`: the knowledge base (vector) and the graph searched at the same time.

    If one side fails, the other's results still come back, the failure is named in `result["errors"]` and the
    status is `partial`.

    Usage:
    ```python
    search = ComprehensiveSearch(limit=10)
    result = search.run(query="Nordvik Aviation test flights", use_vector=True, use_graph=True)
    result["result"]["vector_results"], result["result"]["graph_results"]
    ```
    """

    SOURCE, MAX_LIMIT, POLICY = "comprehensive_search", 50, {"retries": 0}

    @with_base_parameters(GraphToolComponent.__init__)
    def __init__(self, limit: int = 10, vector_mode: str = "hybrid", **shared: Any) -> None:
        """
        :param limit: how many results each side returns by default (1-50).
        :param vector_mode: the knowledge base's search: dense, keyword or hybrid.
        The others as in `GraphToolComponent` (`collection` is searched on both sides).
        """
        if vector_mode not in ("dense", "keyword", "hybrid"):
            raise ValueError("vector_mode must be dense, keyword or hybrid")
        self.vector_mode = vector_mode
        GraphToolComponent.__init__(self, limit, **shared)

    def warm_up(self) -> None:
        """Open the graph store and the knowledge-base search once (a missing side is reported per call)."""
        if self._tools is None:
            try:
                vector = knowledge_base_vector_search(self.collection, self.vector_mode)
            except Exception as exc:  # noqa: BLE001 - the graph side must still work
                message = first_line(exc, 300)

                def vector(query: str, limit: int, _message: str = message) -> list[ContextChunk]:
                    raise RuntimeError(f"the knowledge base cannot be searched: {_message}")

            self._tools = GraphTools(component_graph_store(self.graph_store, self.collection), vector_search=vector)

    @component.output_types(documents=list[Document], result=dict, status=SourceStatus)
    def run(
        self, query: str, use_vector: bool = True, use_graph: bool = True, limit: int | None = None
    ) -> dict[str, Any]:
        """Search both sides for `query`.

        :returns: `result`: `{vector_results, graph_results, total_results, errors}`; `documents`: the knowledge-base
            chunks and the graph facts behind them, as Documents; `status`: partial when one side failed.
        """
        result: dict[str, Any] = {"vector_results": [], "graph_results": [], "total_results": 0, "errors": {}}
        # Each side gets most of the budget, so a slow side is reported while the other's results survive.
        side_timeout = self._guard.policy.timeout_s * 0.8

        def work(tools: GraphTools) -> SourceResult:
            found, hits, chunks = tools.comprehensive(
                query, use_vector, use_graph, self.limit if limit is None else limit, side_timeout
            )
            result.update(found)
            partial = "; ".join(f"{side} search failed: {reason}" for side, reason in found["errors"].items())
            chunks += [fact_to_chunk(hit) for hit in hits]
            return SourceResult(chunks=chunks, total_found=found["total_results"], partial=partial or None)

        self.warm_up()  # loading the knowledge base's search is not part of the question's time budget
        outputs = self._call(work)
        status = outputs["status"]
        if status.ok and not result["vector_results"] and not result["graph_results"] and result["errors"]:
            outputs["status"] = status.changed(status=StatusKind.ERROR)
        return {**outputs, "result": result}
