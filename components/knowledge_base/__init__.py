"""The knowledge base: `KnowledgeBase` (a chunk index over an integration's document store, plus the document
registry), how to open one, and the components that search it, fetch a document and list documents. Its data model
and errors are in `components.knowledge_base.store`."""

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

__all__ = [
    "GetDocument",
    "KnowledgeBase",
    "KnowledgeBaseSearch",
    "ListDocuments",
    "close_knowledge_bases",
    "document_store_for",
    "knowledge_base_for",
    "open_knowledge_base",
]
