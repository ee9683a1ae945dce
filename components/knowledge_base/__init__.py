"""The knowledge base: the store interface, its one implementation (`KnowledgeBase`: a chunk index over an
integration's document store, plus the document registry) and the components that search it, fetch a document and
list documents."""

from components.knowledge_base.factory import (
    close_knowledge_bases,
    document_store_for,
    knowledge_base_for,
    open_knowledge_base,
)
from components.knowledge_base.get_document import GetDocument
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.list_documents import ListDocuments
from components.knowledge_base.search import KnowledgeBaseSearch
from components.knowledge_base.store import (
    ChunkHit,
    ChunkRecord,
    DocumentRecord,
    DocumentSummary,
    KnowledgeBaseMismatch,
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
    "KnowledgeBase",
    "KnowledgeBaseMismatch",
    "KnowledgeBaseSearch",
    "KnowledgeBaseUnavailable",
    "ListDocuments",
    "SearchFilters",
    "TermStatistics",
    "cosine_to_relevance",
    "close_knowledge_bases",
    "document_store_for",
    "knowledge_base_for",
    "open_knowledge_base",
]
