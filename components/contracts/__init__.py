"""The one data model: every source emits `ContextChunk`s, carried through pipelines as Haystack `Document`s."""

from haystack import Document

from components.contracts.chunk import (
    ArxivMetadata,
    BranchDocuments,
    ContextChunk,
    FusedDocuments,
    GraphMetadata,
    KnowledgeBaseMetadata,
    MemoryMetadata,
    RankedDocuments,
    ScoreKind,
    SourceType,
    WebMetadata,
    chunk_to_document,
    document_to_chunk,
    documents_of,
    shown_metadata,
)
from components.contracts.selection import SOURCE_NAMES, check_sources, source_selected
from components.contracts.status import SourceStatus, StatusKind

# The outputs every research source declares (`@component.output_types(**SOURCE_OUTPUTS)`): its chunks as documents
# for the joiner, its status, and the same chunks as the ranker's read-only view of its branch.
SOURCE_OUTPUTS = {"documents": list[Document], "status": SourceStatus, "branch": BranchDocuments}

# The orders `ArxivSearch` accepts for `sort_by` (date: newest submission first). Kept here, not in components.arxiv,
# so the `arxiv_search` tool's schema can offer exactly these without loading the arXiv package (and the stores).
ARXIV_SORT_OPTIONS = ("relevance", "date")

__all__ = [
    "ARXIV_SORT_OPTIONS",
    "ArxivMetadata",
    "BranchDocuments",
    "ContextChunk",
    "FusedDocuments",
    "GraphMetadata",
    "KnowledgeBaseMetadata",
    "MemoryMetadata",
    "RankedDocuments",
    "SOURCE_NAMES",
    "SOURCE_OUTPUTS",
    "ScoreKind",
    "SourceStatus",
    "SourceType",
    "StatusKind",
    "WebMetadata",
    "check_sources",
    "chunk_to_document",
    "document_to_chunk",
    "documents_of",
    "shown_metadata",
    "source_selected",
]
