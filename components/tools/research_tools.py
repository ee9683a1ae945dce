"""The research tools of the registry: each tool contract's adapter onto the component the pipelines run (the
knowledge-base search, the graph components, the web, arXiv and memory sources), so a tool call and a pipeline
branch share one implementation. An adapter's typed signature declares the tool's arguments (their schema is
derived from it, see `ToolSpec.input_schema`); the result schemas are the contracts' own.

Numbers out of range are clamped by the components as the contracts say (the schemas describe the ranges but do
not refuse them); bad input and backend faults come back in `status` (and, for `retrieve_book_content`, as its
`{"error", "code"}` answer), never as an exception. Every evidence item carries its source attribution.
"""

from __future__ import annotations

import datetime as dt
import importlib
from typing import Annotated, Any, Literal

from haystack import Document

from components.contracts import (
    ARXIV_SORT_OPTIONS,
    ContextChunk,
    SourceStatus,
    SourceType,
    StatusKind,
    document_to_chunk,
)
from components.text.dates import input_date
from components.tools.tool_spec import ToolRun, ToolSpec
from components.validation import clamp

STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["source", "status", "execution_time_ms", "total_found", "message"],
    "properties": {
        "source": {"type": "string"},
        "status": {"enum": [kind.value for kind in StatusKind]},
        "execution_time_ms": {"type": "number", "minimum": 0},
        "total_found": {"type": "integer", "minimum": 0},
        "message": {"type": "string"},
        "from_cache": {"type": "boolean"},
        "attempts": {"type": "integer", "minimum": 0},
    },
}

# Every field of a chunk is required (source_url and source_date may be null).
_CHUNK_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string", "minLength": 1},
    "content": {"type": "string", "minLength": 1},
    "source_type": {"enum": [kind.value for kind in SourceType]},
    "source_id": {"type": "string", "minLength": 1},
    "source_title": {"type": "string"},
    "source_url": {"type": ["string", "null"]},
    "source_date": {"type": ["string", "null"]},
    "semantic_relevance": {"type": "number", "minimum": 0, "maximum": 1},
    "metadata": {"type": "object"},
}
CHUNK_SCHEMA: dict[str, Any] = {"type": "object", "required": list(_CHUNK_PROPERTIES), "properties": _CHUNK_PROPERTIES}

FACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["fact", "uuid", "valid_at", "invalid_at", "source_node_uuid"],
    "properties": {
        "fact": {"type": "string"},
        "uuid": {"type": "string"},
        "valid_at": {"type": ["string", "null"]},
        "invalid_at": {"type": ["string", "null"]},
        "source_node_uuid": {"type": ["string", "null"]},
        "document_id": {"type": ["string", "null"]},
        "document_title": {"type": ["string", "null"]},
    },
}


def _result(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": sorted(properties)}


def _closed(schema: dict[str, Any], **optional: dict[str, Any]) -> dict[str, Any]:
    """`schema` with the `optional` properties added (not required) and no other properties allowed."""
    return {**schema, "properties": {**schema["properties"], **optional}, "additionalProperties": False}


CHUNKS_RESULT = _result(
    chunks={"type": "array", "items": CHUNK_SCHEMA},
    total_found={"type": "integer", "minimum": 0},
    execution_time_ms={"type": "number", "minimum": 0},
    status=STATUS_SCHEMA,
)

# The arguments every search tool shares (an adapter's typed signature declares its tool's arguments).
Query = Annotated[str, "What to look for, in plain language (1-2,000 characters)."]
ChunkLimit = Annotated[int | None, "How many chunks (1-50, default 10; clamped)."]
FactLimit = Annotated[int, "How many facts (1-50, default 10; clamped)."]


# -- shaping ----------------------------------------------------------------------------------------------------------


def chunk_json(chunk: ContextChunk) -> dict[str, Any]:
    """One evidence chunk in the tools' JSON: its text, uniform relevance and full source attribution."""
    return {
        "id": chunk.id,
        "content": chunk.text,
        "source_type": chunk.source_type.value,
        "source_id": chunk.source_id,
        "source_title": chunk.source_title,
        "source_url": chunk.source_url,
        "source_date": chunk.source_date.isoformat() if chunk.source_date else None,
        "semantic_relevance": round(float(chunk.semantic_relevance), 6),
        "metadata": dict(chunk.metadata),
    }


def _chunks(documents: list[Document] | None) -> list[ContextChunk]:
    return [document_to_chunk(document) for document in documents or []]


def _reported(outputs: dict[str, Any], output: dict[str, Any], evidence: str = "documents") -> ToolRun:
    """A component's run as the tool's answer: `output` with the component's status, and the component's `evidence`
    output (Documents) as the chunks behind it."""
    status: SourceStatus = outputs["status"]
    return ToolRun(output={**output, "status": status.to_dict()}, chunks=_chunks(outputs.get(evidence)), status=status)


def _chunks_run(outputs: dict[str, Any]) -> ToolRun:
    """A source component's `documents` + `status` as the chunks contract."""
    status: SourceStatus = outputs["status"]
    return _reported(
        outputs,
        {
            "chunks": [chunk_json(chunk) for chunk in _chunks(outputs.get("documents"))],
            "total_found": status.total_found if status.ok else 0,
            "execution_time_ms": status.execution_time_ms,
        },
    )


def _passage_fact_json(fact: dict[str, Any], passage: ContextChunk) -> dict[str, Any]:
    """A fact the graph branch attached to a passage, in the graph contract's shape, with the passage's attribution."""
    return {
        "fact": fact.get("fact") or "",
        "uuid": fact.get("uuid") or "",
        "valid_at": fact.get("valid_at"),
        "invalid_at": fact.get("invalid_at"),
        "source_node_uuid": fact.get("source_node_uuid"),
        "entities": list(fact.get("entities") or []),
        "document_id": fact.get("document_id") or passage.source_id,
        "document_title": fact.get("document_title") or passage.source_title,
        "source_url": passage.source_url,
        "source_date": passage.source_date.isoformat() if passage.source_date else None,
        "chunk_id": fact.get("chunk_id") or passage.id,
        "hop": None,
    }


# -- the knowledge base -------------------------------------------------------------------------------------------


def parse_date_range(value: Any) -> tuple[dt.date | None, dt.date | None]:
    """(start, end) of a `filter_date_range`: `{"start": ..., "end": ...}` (or `from`/`to`), or `[start, end]`.

    Raises `ValueError` with one sentence for anything else, a malformed date, or a start after the end.
    """
    if value is None:
        return None, None
    if isinstance(value, dict):
        unknown = sorted(str(key) for key in value if key not in ("start", "end", "from", "to"))
        if unknown:
            raise ValueError(f"filter_date_range takes start and end, not {', '.join(unknown)}")
        start, end = value.get("start", value.get("from")), value.get("end", value.get("to"))
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        start, end = value
    else:
        raise ValueError('filter_date_range must be {"start": "YYYY-MM-DD", "end": "YYYY-MM-DD"} or [start, end]')
    first, last = input_date(start, "filter_date_range start"), input_date(end, "filter_date_range end")
    if first and last and first > last:
        raise ValueError(f"filter_date_range starts ({first.isoformat()}) after it ends ({last.isoformat()})")
    return first, last


def _source_types(value: Any) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [item.strip().lower() for item in items if isinstance(item, str) and item.strip()]


def _rag_search(
    component: Any,
    query: Query,
    top_k: Annotated[int, "How many chunks (1-50, default 5; out-of-range values are clamped)."] = 5,
    min_relevance: Annotated[float, "Lowest semantic relevance kept (0-1, default 0.5; clamped)."] = 0.5,
    filter_source_type: Annotated[
        list[str] | None, "Only these document types (pdf, md, html, txt, docx, web, arxiv)."
    ] = None,
    filter_date_range: Annotated[
        dict[str, Any] | None, 'Only documents dated in this range: {"start": "YYYY-MM-DD", "end": "YYYY-MM-DD"}.'
    ] = None,
) -> ToolRun:
    try:
        start, end = parse_date_range(filter_date_range)
    except ValueError as exc:  # the contract's answer to a range it cannot take: no chunks, an error status
        status = SourceStatus(source="rag_search", status="error", execution_time_ms=0.0, message=str(exc), attempts=0)
        return _reported({"status": status}, {"chunks": [], "total_found": 0, "execution_time_ms": 0.0})
    filters: dict[str, Any] = {}
    if doc_types := _source_types(filter_source_type):
        filters["doc_types"] = doc_types
    if start:
        filters["date_from"] = start.isoformat()
    if end:
        filters["date_to"] = end.isoformat()
    outputs = component.run(query=query, limit=top_k, min_relevance=min_relevance, filters=filters or None)
    return _chunks_run(outputs)


def _get_document(component: Any, document_id: Annotated[str, "The document's id (from list_documents)."]) -> ToolRun:
    outputs = component.run(document_id=document_id)
    chunks = [chunk_json(chunk) for chunk in _chunks(outputs.get("chunks"))]
    return _reported(outputs, {"document": outputs.get("document"), "chunks": chunks}, evidence="chunks")


def _list_documents(
    component: Any,
    limit: Annotated[int, "Documents per page (1-100, default 20; clamped)."] = 20,
    offset: Annotated[int, "Documents to skip (0 or more, default 0; clamped)."] = 0,
    search: Annotated[str | None, "A part of the title or source to match."] = None,
) -> ToolRun:
    outputs = component.run(limit=limit, offset=offset, search=search)
    return _reported(outputs, {"documents": outputs["documents"], "total": outputs["total"]}, evidence="")


def _book_content(
    component: Any,
    query: Annotated[str, "What to look for (1-1,000 characters)."],
    top_k: Annotated[int, "How many passages (1-10, default 5; clamped)."] = 5,
    min_score: Annotated[float, "Lowest similarity score kept (0-1, default 0.5; clamped)."] = 0.5,
) -> ToolRun:
    outputs = component.run(query=query, top_k=top_k, min_score=min_score)
    return ToolRun(output=dict(outputs["result"]), chunks=_chunks(outputs.get("documents")), status=outputs["status"])


# -- arguments passed through: the plain knowledge-base searches, the web, arXiv and memory -------------------------


def _passed(component: Any, **arguments: Any) -> ToolRun:
    """The tool's arguments handed to the component as they are, None where not given: the sources clamp and check
    their own inputs and fill in their own defaults (the knowledge-base searches' limit 10 and text weight 0.5)."""
    return _chunks_run(component.run(**arguments))


def _vector_search(component: Any, query: Query, limit: ChunkLimit = None) -> ToolRun:
    return _passed(component, query=query, limit=limit)


def _hybrid_search(
    component: Any,
    query: Query,
    limit: ChunkLimit = None,
    text_weight: Annotated[
        float | None, "Weight of the keyword list in the fusion (0-1, default 0.5; clamped)."
    ] = None,
) -> ToolRun:
    return _passed(component, query=query, limit=limit, text_weight=text_weight)


def _web_search(
    component: Any,
    query: Annotated[str, "What to search the web for (1-1,000 characters)."],
    num_results: Annotated[int | None, "How many pages (1-20, default 5; clamped)."] = None,
    languages: Annotated[list[str] | None, "Preferred page languages (e.g. en, de)."] = None,
    include_domains: Annotated[list[str] | None, "Only pages of these domains."] = None,
    exclude_domains: Annotated[list[str] | None, "Never pages of these domains."] = None,
) -> ToolRun:
    return _passed(
        component,
        query=query,
        num_results=num_results,
        languages=languages,
        include_domains=include_domains,
        exclude_domains=exclude_domains,
    )


def _arxiv_search(
    component: Any,
    query: Annotated[str, "Plain words, or arXiv's field syntax (ti:transformer AND au:vaswani)."],
    num_results: Annotated[int | None, "How many papers (1-50, default 5; clamped)."] = None,
    sort_by: Annotated[
        Literal[ARXIV_SORT_OPTIONS] | None,  # type: ignore[valid-type]
        "Order of papers: relevance (default) or date (newest submission first).",
    ] = None,
    categories: Annotated[list[str] | None, "Only these arXiv categories (cs.IR, cs.CL...)."] = None,
    date_from: Annotated[str | None, "Only papers submitted on or after this date (YYYY-MM-DD)."] = None,
    date_to: Annotated[str | None, "Only papers submitted on or before this date (YYYY-MM-DD)."] = None,
) -> ToolRun:
    return _passed(
        component,
        query=query,
        num_results=num_results,
        sort_by=sort_by,
        categories=categories,
        date_from=date_from,
        date_to=date_to,
    )


def _memory_recall(
    component: Any,
    query: Query,
    session_id: Annotated[str | None, "The conversation to recall from (all conversations when absent)."] = None,
    num_results: Annotated[int | None, "How many interactions (default 3; clamped to the memory's maximum)."] = None,
    time_window: Annotated[str | None, "Only interactions within this duration before now: 24h, 7d, 2w."] = None,
) -> ToolRun:
    return _passed(component, query=query, session_id=session_id, num_results=num_results, time_window=time_window)


# -- the graph --------------------------------------------------------------------------------------------------------


def _graph_search(
    component: Any,
    query: Query,
    limit: FactLimit = 10,
    as_of: Annotated[str | None, "Only facts valid on this ISO date."] = None,
) -> ToolRun:
    outputs = component.run(query=query, top_k=limit, as_of=as_of)
    # The graph branch returns the passages its walk reached, each carrying the facts read in it: the tool's
    # answer is those facts (with their passage's attribution), its evidence the passages.
    facts = [
        _passage_fact_json(fact, chunk)
        for chunk in _chunks(outputs.get("documents"))
        for fact in chunk.metadata.get("graph_facts") or []
    ][: clamp(limit, 1, 50, "limit", default=10)]
    output = {"facts": facts, "total_found": len(facts), "execution_time_ms": outputs["status"].execution_time_ms}
    return _reported(outputs, output)


def _comprehensive(
    component: Any,
    query: Query,
    use_vector: Annotated[bool, "Search the knowledge base (default true)."] = True,
    use_graph: Annotated[bool, "Search the knowledge graph (default true)."] = True,
    limit: Annotated[int, "Results per side (1-50, default 10; clamped)."] = 10,
) -> ToolRun:
    outputs = component.run(query=query, use_vector=use_vector, use_graph=use_graph, limit=limit)
    return _reported(outputs, outputs["result"])


def _relationships(
    component: Any,
    entity_name: Annotated[str, "The entity (company, person, product, place...)."],
    depth: Annotated[int, "Hops to walk (1-5, default 2; clamped)."] = 2,
) -> ToolRun:
    outputs = component.run(entity_name=entity_name, depth=depth)
    return _reported(outputs, outputs["relationships"])


def _timeline(
    component: Any,
    entity_name: Annotated[str, "The entity; its aliases and more specific names match too."],
    start_date: Annotated[str | None, "Keep facts from this ISO date on (2019, 2019-06 or 2019-06-30)."] = None,
    end_date: Annotated[str | None, "Keep facts up to this ISO date (any precision)."] = None,
) -> ToolRun:
    outputs = component.run(entity_name=entity_name, start_date=start_date, end_date=end_date)
    entity = str(entity_name).strip()
    # The facts below the event-confidence threshold are not events of the timeline, but they are not withheld.
    output = {"entity": entity, "entities": outputs["entities"], "timeline": outputs["timeline"]}
    return _reported(outputs, {**output, "less_certain": outputs.get("less_certain") or []})


# -- factories (imports kept lazy: listing the tools must not load the stores) ----------------------------------------

_KB_SEARCH = "components.knowledge_base.search.KnowledgeBaseSearch"


def _factory(path: str, **init: Any) -> Any:
    """A factory of the component class at `path` (module.Class), built with `init`."""
    module, _, name = path.rpartition(".")
    return lambda: getattr(importlib.import_module(module), name)(**init)


def _tool(
    name: str,
    description: str,
    factory: Any,
    adapter: Any,
    source: str,
    *,
    result: dict[str, Any] | None = None,
    result_schema: dict[str, Any] | None = None,
    network: bool = False,
) -> ToolSpec:
    """A research tool's spec: its arguments are its adapter's typed signature; its result schema is `result_schema`,
    else the `result` properties and the status (the chunks contract when neither is given)."""
    if result_schema is None:
        result_schema = CHUNKS_RESULT if result is None else _result(**result, status=STATUS_SCHEMA)
    return ToolSpec(
        name, description, factory, network=network, result_schema=result_schema, adapter=adapter, source=source
    )


# The knowledge-base searches' own guards are named apart from their tools (kb_rag_search, ...), so the executor's
# breaker and telemetry count each tool call once.
RESEARCH_TOOLS: tuple[ToolSpec, ...] = (
    _tool(
        "rag_search",
        "Semantic search of the knowledge base (the analyst's own documents): the chunks closest in meaning to the "
        "query, each with its document, chunk position and relevance.",
        _factory(_KB_SEARCH, mode="dense", limit=5, min_relevance=0.5, source_name="kb_rag_search"),
        _rag_search,
        "kb",
    ),
    _tool(
        "vector_search",
        "Dense vector search of the knowledge base: the chunks nearest the query's embedding.",
        _factory(_KB_SEARCH, mode="dense", limit=10, source_name="kb_vector_search"),
        _vector_search,
        "kb",
    ),
    _tool(
        "hybrid_search",
        "Hybrid search of the knowledge base: dense and keyword results fused (reciprocal rank fusion). Best for "
        "names, numbers and exact terms.",
        _factory(_KB_SEARCH, mode="hybrid", limit=10, source_name="kb_hybrid_search"),
        _hybrid_search,
        "kb",
    ),
    _tool(
        "list_documents",
        "List the knowledge base's documents (newest first) with their ids and chunk counts; `search` matches a "
        "part of the title or source.",
        _factory("components.knowledge_base.list_documents.ListDocuments"),
        _list_documents,
        "kb",
        result={
            "documents": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["document_id", "title", "chunk_count"],
                    "properties": {"document_id": {"type": "string"}, "chunk_count": {"type": "integer"}},
                },
            },
            "total": {"type": "integer", "minimum": 0},
        },
    ),
    _tool(
        "get_document",
        "Read one knowledge-base document by its id: its fields and all its chunks in order.",
        _factory("components.knowledge_base.get_document.GetDocument"),
        _get_document,
        "kb",
        result={
            "document": {"type": ["object", "null"]},
            "chunks": {"type": "array", "items": CHUNK_SCHEMA},
        },
    ),
    _tool(
        "retrieve_book_content",
        "Find passages of the books and long documents of the knowledge base, with their page and section.",
        _factory("components.knowledge_base.book_content.BookContentRetriever"),
        _book_content,
        "kb",
        result_schema={
            "type": "object",
            "oneOf": [
                _closed(
                    _result(
                        results={
                            "type": "array",
                            "items": _result(
                                id={"type": "string"},
                                content={"type": "string"},
                                score={"type": "number", "minimum": 0, "maximum": 1},
                                source_url={"type": ["string", "null"]},
                                page_number={"type": ["integer", "null"]},
                                section_title={"type": ["string", "null"]},
                                metadata={"type": "object"},
                            ),
                        },
                        query_embedding_used={"type": "array", "items": {"type": "number"}},
                    ),
                    message={"type": "string"},
                ),
                _closed(
                    _result(
                        error={"type": "string"},
                        code={"enum": ["CONNECTION_ERROR", "AUTH_ERROR", "INVALID_QUERY", "TIMEOUT_ERROR"]},
                    )
                ),
            ],
        },
    ),
    _tool(
        "graph_search",
        "Search the knowledge graph's facts (dated sentences about entities) for the query.",
        _factory("components.graph.graph_search.GraphSearch", top_k=10),
        _graph_search,
        "graph",
        result={
            "facts": {"type": "array", "items": FACT_SCHEMA},
            "total_found": {"type": "integer", "minimum": 0},
            "execution_time_ms": {"type": "number", "minimum": 0},
        },
    ),
    _tool(
        "get_entity_relationships",
        "How an entity is connected to others in the knowledge graph: the facts on paths up to `depth` hops.",
        _factory("components.graph.entity_relationships.EntityRelationships"),
        _relationships,
        "graph",
        result={
            "central_entity": {"type": "string"},
            "related_facts": {"type": "array", "items": FACT_SCHEMA},
            "search_method": {"enum": ["graph_traversal", "text_search"]},
            "depth": {"type": "integer", "minimum": 1, "maximum": 5},
        },
    ),
    _tool(
        "get_entity_timeline",
        "What happened to an entity, and when: its dated facts from the knowledge graph, oldest first, within an "
        "optional ISO date range; facts the extractor is less sure are events of the entity are in `less_certain`.",
        _factory("components.graph.entity_timeline.EntityTimeline"),
        _timeline,
        "graph",
        result={
            "entity": {"type": "string"},
            "entities": {"type": "array", "items": {"type": "string"}},
            "timeline": {"type": "array", "items": FACT_SCHEMA},
            "less_certain": {"type": "array", "items": FACT_SCHEMA},
        },
    ),
    _tool(
        "perform_comprehensive_search",
        "Search the knowledge base (vector) and the knowledge graph at the same time; if one side fails the "
        "other still answers and `errors` names the failure.",
        _factory("components.graph.comprehensive_search.ComprehensiveSearch"),
        _comprehensive,
        "graph",
        result={
            "vector_results": {"type": "array", "items": {"type": "object", "required": ["content", "chunk_id"]}},
            "graph_results": {"type": "array", "items": FACT_SCHEMA},
            "total_results": {"type": "integer", "minimum": 0},
            "errors": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    ),
    _tool(
        "firecrawl_search",
        "Search the web (Firecrawl) and read the result pages: the relevant chunks of each page, with its URL, "
        "domain and fetch time.",
        _factory("components.web.search.WebSearch"),
        _web_search,
        "web",
        network=True,
    ),
    _tool(
        "arxiv_search",
        "Search arXiv for papers: the relevant chunks of each abstract, with authors, categories, dates, links "
        "and DOI.",
        _factory("components.arxiv.search.ArxivSearch"),
        _arxiv_search,
        "arxiv",
        network=True,
    ),
    _tool(
        "memory_recall",
        "Recall earlier questions and answers of the conversation relevant to the query.",
        _factory("components.memory.recall.MemoryRecall"),
        _memory_recall,
        "memory",
    ),
)
