"""Ingestion: files, uploads, texts (and, through the same service, web pages and arXiv papers) into the knowledge
base, as token-sized, embedded chunks with their pages, sections and dates.

`Ingestor` is the one service the CLI, the app and the HTTP server call; `ensure_demo_corpus` fills an empty
knowledge base with the demo corpus.
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use (PEP 562): `pipelines.cli.ingest` and `ingest.report` must not pull the stores and the
# embedder in, so that `research --help` stays instant.
_EXPORTS = {
    "IngestHook": "components.knowledge_base.hooks",
    "default_hooks": "ingest.ingestor",
    "IngestItem": "ingest.ingestor",
    "Ingestor": "ingest.ingestor",
    "chunk_id_for": "ingest.ingestor",
    "document_id_for": "ingest.ingestor",
    "IngestProgress": "ingest.report",
    "IngestReport": "ingest.report",
}

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


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'ingest' has no attribute {name!r}")
