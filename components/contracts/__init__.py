"""The one data model: every source emits `ContextChunk`s, carried through pipelines as Haystack `Document`s."""

from haystack import Document

from components.contracts.chunk import (
    ArxivMetadata,
    BranchDocuments,
    ContextChunk,
    GraphMetadata,
    KnowledgeBaseMetadata,
    MemoryMetadata,
    ScoreKind,
    SourceType,
    WebMetadata,
    chunk_to_document,
    document_to_chunk,
)
from components.contracts.selection import SOURCE_NAMES, check_sources, source_selected
from components.contracts.status import SourceStatus, StatusKind

# The outputs every research source declares (`@component.output_types(**SOURCE_OUTPUTS)`): its chunks as documents
# for the joiner, its status, and the same chunks as the ranker's read-only view of its branch.
SOURCE_OUTPUTS = {"documents": list[Document], "status": SourceStatus, "branch": BranchDocuments}

__all__ = [
    "ArxivMetadata",
    "BranchDocuments",
    "ContextChunk",
    "GraphMetadata",
    "KnowledgeBaseMetadata",
    "MemoryMetadata",
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
    "source_selected",
]
