"""What else happens when a document is written or deleted, inside the knowledge base's own transaction.

The knowledge-graph extraction plugs in here: a hook sees each document with its chunks as they are written,
and each deletion, on the same database connection (pgvector), so a document, its chunks and its graph facts
change together or not at all. Backends without a shared database call the hooks afterwards with `None`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from components.knowledge_base.store import ChunkRecord, DocumentRecord


@runtime_checkable
class IngestHook(Protocol):
    """Something that runs with every document written and every document deleted."""

    def on_document(self, connection: Any, document: DocumentRecord, chunks: list[ChunkRecord]) -> None:
        """`document` (with its full text) and its embedded chunks are being written on `connection`."""

    def on_delete(self, connection: Any, document_id: str) -> None:
        """The document `document_id` is being deleted on `connection`."""


@runtime_checkable
class RefreshableHook(IngestHook, Protocol):
    """A hook whose derived data carries a version: an unchanged document is handed to it again (with its stored
    chunks, nothing re-embedded) when `is_current` says its data is older than the hook's."""

    def is_current(self, document_ids: list[str]) -> dict[str, bool]:
        """For each document id: whether its derived data is of the hook's current version."""


@runtime_checkable
class ReportingHook(IngestHook, Protocol):
    """A hook with something to tell after an ingestion run (documents it could not handle, and what to do)."""

    def ingest_note(self) -> str | None:
        """One sentence for the ingest report, or None when there is nothing to tell."""
