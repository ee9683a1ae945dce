"""`ChunkIndex`: a knowledge base's chunks in an integration's Haystack `DocumentStore`, and the evidence this
product keeps beside them.

The chunks are Haystack `Document`s written with the integration's own `write_documents`, so a collection the
assistant fills is an ordinary Haystack collection that Haystack's retrievers can read, and a collection Haystack's
`DocumentWriter` filled can be read by the assistant (`research kb attach`). Per backend one subclass wraps the
integration's store (`PgvectorDocumentStore`, `QdrantDocumentStore`, `MilvusDocumentStore`) and says in its
docstring where it uses the integration's retrievers and where its own query on the store's own connection or client.

A chunk the assistant wrote carries these `meta` fields (see `chunk_to_document`):

| field | what |
|---|---|
| `document_id`, `chunk_index` | the document it belongs to and its place in it |
| `title`, `source`, `doc_type`, `url` | the document's, repeated so that a hit is attributable from the chunk alone |
| `date` | the document's date, ISO `YYYY-MM-DD`, or absent |
| `date_ordinal` | the same date as a proleptic ordinal, 0 without a date: what date-range filters compare |
| anything else | the chunk's own metadata (page number, section title, character offsets, ...) |

A chunk written by someone else has only what its writer gave it; the document registry then says which document
it belongs to (`DocumentRegistry.chunk_documents`).

Filters reach an index as Haystack filter dicts (`{"operator": "AND", "conditions": [...]}`, fields `meta.<name>`
and `id`), which each integration translates for its engine; `search_filters_to_haystack` makes them from the
product's `SearchFilters`.

The evidence the ranker and the answer use is kept beside the chunks, never inside a user's rows: per chunk, its
sentence spans with their in-context embeddings and the analyzer's term counts; per collection, each term's
document frequency. An index that cannot keep some of it returns `{}` / `None` from the reading methods, and the
ranker copes.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from haystack import Document

from components.contracts import ScoreKind
from components.knowledge_base.store import ChunkRecord, DocumentRecord, SearchFilters, TermStatistics

# The meta fields the assistant writes on its own chunks; everything else in `meta` is the chunk's own metadata.
DOCUMENT_FIELDS_ON_CHUNKS = ("document_id", "chunk_index", "title", "source", "doc_type", "url", "date", "date_ordinal")


@dataclass
class ChunkEvidence:
    """What the ranker keeps per chunk beside the integration's row: sentence spans (offsets in the chunk text)
    with their in-context embeddings (row k belongs to span k), and the analyzer's term counts."""

    chunk_id: str
    sentence_spans: list[tuple[int, int]] = field(default_factory=list)
    sentence_embeddings: np.ndarray | None = None
    term_counts: dict[str, int] | None = None

    @classmethod
    def of(cls, chunk: ChunkRecord) -> ChunkEvidence:
        return cls(chunk.chunk_id, list(chunk.sentence_spans), chunk.sentence_embeddings, chunk.term_counts)

    @property
    def empty(self) -> bool:
        return not self.term_counts and (not self.sentence_spans or self.sentence_embeddings is None)


@dataclass
class IndexHit:
    """A chunk an index found: the Haystack `Document` (embedding not loaded), the engine's raw score (`kind` says
    what it is) and the cosine similarity to the query when the index could compute it."""

    document: Document
    raw_score: float
    kind: ScoreKind
    cosine: float | None = None


class ChunkIndex(ABC):
    """The chunks of one knowledge base in an integration's `DocumentStore`. Implementations are thread-safe.

    `document_store` is the integration's store as given (a component's init parameter, serialised in
    `pipelines.yaml`); the index never replaces it, and never modifies or deletes a chunk it did not write unless
    asked to by id.
    """

    backend: str
    collection: str  # the table / collection / index name the chunks are in (the registry's tables follow it)
    document_store: Any
    embedding_model: str
    dimension: int

    # -- writes -----------------------------------------------------------------------------------------------------

    @abstractmethod
    def write(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        """Write `chunks` (replacing any chunk with the same id) and their evidence, with the integration's
        `write_documents` (policy OVERWRITE); evidence for a chunk id replaces its earlier evidence."""

    @abstractmethod
    def delete(self, chunk_ids: list[str]) -> None:
        """Remove these chunks and their evidence (ids that do not exist are ignored)."""

    # -- reads ------------------------------------------------------------------------------------------------------

    @abstractmethod
    def fetch(self, chunk_ids: list[str], with_embeddings: bool = False) -> list[Document]:
        """These chunks, in the order given; ids that do not exist are left out. One round trip where possible."""

    @abstractmethod
    def dense(self, embedding: np.ndarray, limit: int, filters: dict | None = None) -> list[IndexHit]:
        """The `limit` chunks nearest to `embedding` by cosine, best first (`cosine` always filled)."""

    @abstractmethod
    def keyword(
        self, query: str, limit: int, filters: dict | None = None, query_embedding: np.ndarray | None = None
    ) -> list[IndexHit]:
        """The `limit` best matches of ANY of the query's terms, best first; `cosine` filled when given
        `query_embedding` and cheap to compute."""

    @abstractmethod
    def count(self) -> int:
        """How many chunks the collection holds."""

    @abstractmethod
    def iter_documents(self, batch_size: int = 1000, with_embeddings: bool = False) -> Iterator[list[Document]]:
        """Every chunk, a batch at a time (for enrichment, copying and re-extraction)."""

    # -- evidence ---------------------------------------------------------------------------------------------------

    def evidence(self, chunk_ids: list[str]) -> dict[str, ChunkEvidence]:
        """The stored evidence of these chunks (chunks without any are absent)."""
        return {}

    def sentence_similarities(
        self, chunk_ids: list[str], query_embedding: np.ndarray
    ) -> dict[str, list[tuple[int, int, float]]]:
        """Per chunk id, `(start, end, cosine)` of each stored sentence to the query, in one round trip."""
        return {}

    def chunk_cosines(self, chunk_ids: list[str], query_embedding: np.ndarray) -> dict[str, float] | None:
        """Per chunk id, the cosine of its embedding to the query in one round trip; None when the engine cannot
        look embeddings up by id cheaply."""
        return None

    def term_statistics(self, terms: list[str]) -> TermStatistics | None:
        """Collection statistics for BM25 over the analyzer's terms; None when the index keeps none."""
        return None

    # -- housekeeping -----------------------------------------------------------------------------------------------

    def ensure_vector_index(self) -> bool:
        """Build a vector index deferred until after a bulk load; True when it exists (or is not needed)."""
        return True

    def drop(self) -> None:
        """Delete the collection and the evidence beside it (tests and `research docs --drop`)."""
        raise NotImplementedError(f"{self.backend} cannot drop its collection")

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections, clients and file locks."""


# -- conversions shared by every backend ------------------------------------------------------------------------------


def date_ordinal(value: dt.date | None) -> int:
    """The stored form of a document date for range filters: its proleptic ordinal, 0 without a date."""
    if value is None:
        return 0
    if isinstance(value, dt.datetime):
        value = value.date()
    return value.toordinal()


def chunk_to_document(document: DocumentRecord, chunk: ChunkRecord, *, with_embedding: bool = True) -> Document:
    """The Haystack `Document` a chunk is written as (meta laid out as the module docstring says)."""
    meta: dict[str, Any] = dict(chunk.metadata or {})
    meta.update(
        document_id=document.document_id,
        chunk_index=int(chunk.chunk_index),
        title=document.title or "",
        source=document.source or "",
        doc_type=document.doc_type or "",
        url=document.url or "",
        date_ordinal=date_ordinal(document.date),
    )
    if document.date is not None:
        meta["date"] = document.date.isoformat()
    embedding = None
    if with_embedding and chunk.embedding is not None:
        embedding = np.asarray(chunk.embedding, dtype=np.float32).tolist()
    return Document(id=chunk.chunk_id, content=chunk.text, meta=meta, embedding=embedding)


def document_to_chunk(doc: Document, document_id: str | None = None, chunk_index: int | None = None) -> ChunkRecord:
    """The `ChunkRecord` a Haystack `Document` holds; `document_id` / `chunk_index` come from its meta unless given
    (a chunk written by someone else has them from the registry)."""
    meta = dict(doc.meta or {})
    own = {key: value for key, value in meta.items() if key not in DOCUMENT_FIELDS_ON_CHUNKS}
    return ChunkRecord(
        chunk_id=str(doc.id),
        document_id=str(document_id if document_id is not None else meta.get("document_id", "")),
        chunk_index=int(chunk_index if chunk_index is not None else meta.get("chunk_index", 0) or 0),
        text=doc.content or "",
        embedding=None if doc.embedding is None else np.asarray(doc.embedding, dtype=np.float32),
        metadata=own,
    )


def search_filters_to_haystack(filters: SearchFilters | None) -> dict | None:
    """Haystack filters on the chunk meta the assistant writes, for `SearchFilters`; None when nothing is filtered.

    Undated documents fall out of any date range (their `date_ordinal` is 0), as they always have.
    """
    if filters is None or filters.empty:
        return None
    conditions: list[dict[str, Any]] = []
    if filters.doc_types:
        conditions.append({"field": "meta.doc_type", "operator": "in", "value": list(filters.doc_types)})
    if filters.document_ids:
        conditions.append({"field": "meta.document_id", "operator": "in", "value": list(filters.document_ids)})
    if filters.date_from is not None:
        conditions.append({"field": "meta.date_ordinal", "operator": ">=", "value": date_ordinal(filters.date_from)})
    if filters.date_to is not None:
        conditions.append({"field": "meta.date_ordinal", "operator": "<=", "value": date_ordinal(filters.date_to)})
        conditions.append({"field": "meta.date_ordinal", "operator": ">", "value": 0})
    return {"operator": "AND", "conditions": conditions}
