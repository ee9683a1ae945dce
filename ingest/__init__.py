"""Ingestion: files, uploads, texts (and, through the same service, web pages and arXiv papers) into the knowledge
base, as token-sized, embedded chunks with their pages, sections and dates.

`Ingestor` is the one service the CLI, the app and the HTTP server call; `ensure_demo_corpus` fills an empty
knowledge base with the demo corpus.
"""

from components.knowledge_base.hooks import IngestHook
from ingest.ingestor import IngestItem, Ingestor, chunk_id_for, default_hooks, document_id_for
from ingest.report import IngestProgress, IngestReport

__all__ = [
    "IngestHook",
    "IngestItem",
    "IngestProgress",
    "IngestReport",
    "Ingestor",
    "chunk_id_for",
    "default_hooks",
    "document_id_for",
]
