"""The knowledge base: the store interface, its backends (pgvector here; Milvus and Qdrant by settings) and the
components that search it, fetch a document and list documents."""

from components.knowledge_base.factory import close_knowledge_bases, open_knowledge_base
from components.knowledge_base.get_document import GetDocument
from components.knowledge_base.list_documents import ListDocuments
from components.knowledge_base.search import KnowledgeBaseSearch
from components.knowledge_base.store import (
    ChunkHit,
    ChunkRecord,
    DocumentRecord,
    DocumentSummary,
    KnowledgeBaseMismatch,
    KnowledgeBaseStore,
    KnowledgeBaseUnavailable,
    SearchFilters,
    TermStatistics,
    cosine_to_relevance,
)

__all__ = [
    "ChunkHit",
    "ChunkRecord",
    "DocumentRecord",
    "DocumentSummary",
    "GetDocument",
    "KnowledgeBaseMismatch",
    "KnowledgeBaseSearch",
    "KnowledgeBaseStore",
    "KnowledgeBaseUnavailable",
    "ListDocuments",
    "SearchFilters",
    "TermStatistics",
    "cosine_to_relevance",
    "close_knowledge_bases",
    "open_knowledge_base",
]
