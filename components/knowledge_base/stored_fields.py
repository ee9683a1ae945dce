"""How documents and chunks are laid out as flat rows in the Milvus and Qdrant collections.

Both engines store a document row (one per document, with its chunk count) and chunk rows that repeat the
fields every search filters on (document type, date), so a filtered search is one call. Dates are stored as
proleptic ordinals (0 = no date) so that a range filter is an integer comparison and undated documents fall out
of any date range, as they do in PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from components.knowledge_base.store import DocumentRecord

NO_DATE = 0
# Milvus caps VARCHAR at 65,535 bytes; longer document text is rebuilt from the chunks instead of truncated.
MAX_TEXT_BYTES = 65_535
_COLLECTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")


def check_collection_name(collection: str) -> str:
    """`collection` if it is a valid name for every backend (letters, digits, underscores), else ValueError."""
    if not isinstance(collection, str) or not _COLLECTION_NAME.fullmatch(collection):
        raise ValueError(
            f"Collection name {collection!r} must start with a letter or underscore and hold only letters, "
            "digits and underscores."
        )
    return collection


def date_to_ordinal(value: dt.date | None) -> int:
    """The stored form of a document date."""
    if value is None:
        return NO_DATE
    if isinstance(value, dt.datetime):
        value = value.date()
    return value.toordinal()


def ordinal_to_date(value: int | None) -> dt.date | None:
    """The document date a stored ordinal stands for."""
    if not value:
        return None
    return dt.date.fromordinal(int(value))


def json_safe(value: dict[str, Any] | None) -> dict[str, Any]:
    """Metadata as plain JSON values (dates and other objects become strings)."""
    return json.loads(json.dumps(value or {}, default=str))


def document_fields(document: DocumentRecord, chunk_count: int) -> dict[str, Any]:
    """The stored fields of a document row (without the engine's key and vector)."""
    text = document.text or ""
    text_in_chunks = len(text.encode("utf-8")) > MAX_TEXT_BYTES
    ingested_at = document.ingested_at or dt.datetime.now(dt.UTC)
    if ingested_at.tzinfo is None:
        ingested_at = ingested_at.replace(tzinfo=dt.UTC)
    return {
        "document_id": document.document_id,
        "title": document.title or "",
        "source": document.source or "",
        "doc_type": document.doc_type or "",
        "content_hash": document.content_hash or "",
        "url": document.url or "",
        "doc_date": date_to_ordinal(document.date),
        "ingested_at": ingested_at.timestamp(),
        "chunk_count": int(chunk_count),
        "text": "" if text_in_chunks else text,
        "text_in_chunks": text_in_chunks,
        "metadata": json_safe(document.metadata),
    }


def document_from_fields(row: dict[str, Any]) -> DocumentRecord:
    """The `DocumentRecord` a document row holds (text rebuilt by the caller when `text_in_chunks`)."""
    ingested = row.get("ingested_at")
    return DocumentRecord(
        document_id=str(row["document_id"]),
        title=row.get("title") or "",
        source=row.get("source") or "",
        doc_type=row.get("doc_type") or "",
        content_hash=row.get("content_hash") or "",
        text=row.get("text") or "",
        url=row.get("url") or None,
        date=ordinal_to_date(row.get("doc_date")),
        ingested_at=dt.datetime.fromtimestamp(float(ingested), tz=dt.UTC) if ingested else None,
        metadata=dict(row.get("metadata") or {}),
    )


def matches_search(row: dict[str, Any], search: str | None) -> bool:
    """Whether a document row matches a list search (case-insensitive, in title or source)."""
    if not search:
        return True
    needle = search.strip().lower()
    return needle in (row.get("title") or "").lower() or needle in (row.get("source") or "").lower()
