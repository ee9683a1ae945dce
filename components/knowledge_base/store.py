"""The knowledge-base store interface every backend (pgvector, Milvus, Qdrant) implements.

The store owns the backend: schema, writes, filters, raw searches and the translation of its scores. Retriever
components are thin layers over it (see `components/knowledge_base/search.py`), so the same components, the
same attribution and the same relevance scale serve every backend.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from components.contracts import ScoreKind


@dataclass
class DocumentRecord:
    """One ingested document: a file, a web page or a paper."""

    document_id: str
    title: str
    source: str  # the path, URL or arXiv id it came from
    doc_type: str  # txt | md | html | pdf | docx | web | arxiv
    content_hash: str
    text: str = ""
    url: str | None = None
    date: dt.date | None = None
    ingested_at: dt.datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class ChunkRecord:
    """One chunk of a document, with its embedding."""

    chunk_id: str
    document_id: str
    chunk_index: int
    text: str
    embedding: np.ndarray | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # page_number, section_title, char offsets, ...
    # Evidence for ranking, optional (a backend may ignore them): sentence spans (offsets in `text`) with their
    # in-context embeddings (row k belongs to span k), and the analyzer's term counts of the title and text.
    sentence_spans: list[tuple[int, int]] = field(default_factory=list)
    sentence_embeddings: np.ndarray | None = None
    term_counts: dict[str, int] | None = None


@dataclass(frozen=True)
class TermStatistics:
    """Collection statistics for BM25: how many chunks, their average length in terms, and each term's document
    frequency (chunks holding it; terms the collection never saw are 0)."""

    n_chunks: int
    avg_terms: float
    df: dict[str, int]


@dataclass
class DocumentSummary:
    """A row of the document list."""

    document: DocumentRecord
    chunk_count: int


@dataclass
class ChunkHit:
    """A chunk found by a search, with its document and scores.

    `raw_score` is what the backend returned (`score_kind` says what it is); `cosine` is the cosine similarity
    of the chunk's embedding to the query embedding when the backend could compute it (always for dense search),
    which is what `semantic_relevance` is derived from.
    """

    chunk: ChunkRecord
    document: DocumentRecord
    total_chunks: int
    raw_score: float
    score_kind: ScoreKind
    cosine: float | None = None


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions every search honours: document types, a date range (inclusive) and document ids."""

    doc_types: tuple[str, ...] = ()
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    document_ids: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.doc_types or self.date_from or self.date_to or self.document_ids)


class KnowledgeBaseUnavailable(RuntimeError):
    """The backend cannot be opened or reached; the message is one sentence saying what to do."""


class KnowledgeBaseMismatch(KnowledgeBaseUnavailable):
    """The collection exists with another embedding model or dimension; retrying will not help."""


class KnowledgeBaseStore(ABC):
    """What every knowledge-base backend offers. Implementations are thread-safe."""

    backend: str
    collection: str
    embedding_model: str
    dimension: int

    @abstractmethod
    def upsert_document(
        self,
        document: DocumentRecord,
        chunks: list[ChunkRecord],
        *,
        also: Callable[[Any], None] | None = None,
    ) -> None:
        """Write `document` and its chunks, replacing any earlier version of the same `document_id` atomically.

        `also(connection)` runs inside the same transaction where the backend shares PostgreSQL with the graph
        (pgvector); other backends call it afterwards with `None`.
        """

    @abstractmethod
    def delete_document(self, document_id: str, *, also: Callable[[Any], None] | None = None) -> bool:
        """Remove a document and its chunks; False when it did not exist."""

    @abstractmethod
    def find_by_source(self, source: str) -> DocumentRecord | None:
        """The document ingested from `source` (path, URL or arXiv id), if any."""

    @abstractmethod
    def get_document(self, document_id: str) -> tuple[DocumentRecord, list[ChunkRecord]] | None:
        """A document with its chunks in order (embeddings not loaded), or None."""

    @abstractmethod
    def list_documents(
        self, limit: int = 20, offset: int = 0, search: str | None = None, filters: SearchFilters | None = None
    ) -> tuple[list[DocumentSummary], int]:
        """A page of documents (newest first) with chunk counts, and the total that match."""

    @abstractmethod
    def dense_search(
        self, embedding: np.ndarray, limit: int, filters: SearchFilters | None = None
    ) -> list[ChunkHit]:
        """The `limit` chunks nearest to `embedding`, best first."""

    @abstractmethod
    def keyword_search(
        self,
        query: str,
        limit: int,
        filters: SearchFilters | None = None,
        query_embedding: np.ndarray | None = None,
    ) -> list[ChunkHit]:
        """The `limit` best full-text matches for `query`, best first; fills `cosine` when given the embedding."""

    @abstractmethod
    def count_chunks(self) -> int:
        """How many chunks the collection holds."""

    @abstractmethod
    def count_documents(self) -> int:
        """How many documents the collection holds."""

    def iter_chunks(self, batch_size: int = 1000):  # noqa: ANN201
        """Every (document, chunks-with-embeddings) pair, for copying between backends."""
        raise NotImplementedError(f"{self.backend} cannot list its chunks for copying yet")

    def ensure_vector_index(self) -> bool:
        """Build the vector index if the backend defers it until after bulk loads; True when it exists.

        Ingestion calls this once after a run. Backends that index as they write have nothing to do.
        """
        return True

    def sentence_similarities(
        self, chunk_ids: list[str], query_embedding: np.ndarray
    ) -> dict[str, list[tuple[int, int, float]]]:
        """Per chunk id, `(start, end, cosine)` of each stored sentence (offsets in the chunk text) to the query.

        One round trip for all candidates. Backends that store no sentence vectors return `{}`; the ranker then
        falls back to the signals it can compute itself.
        """
        return {}

    @property
    def looks_up_cosines(self) -> bool:
        """Whether `chunk_cosines` answers cheaply (so a keyword search may start before the question is embedded)."""
        return False

    def chunk_cosines(self, chunk_ids: list[str], query_embedding: np.ndarray) -> dict[str, float] | None:
        """Per chunk id, the cosine of its stored embedding to the query, in one round trip; None when the backend
        cannot look embeddings up by id cheaply (callers then pass the embedding to `keyword_search` instead).

        It lets a keyword search start before the question is embedded: the two overlap, and the cosines of the
        few chunks found are filled in afterwards.
        """
        return None

    def term_statistics(self, terms: list[str]) -> TermStatistics | None:
        """Chunk count, average chunk length in terms and the document frequency of `terms` (analyzer terms).

        None when the backend keeps no term statistics; the ranker then uses the candidates' own statistics.
        """
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and file locks."""


def cosine_to_relevance(cosine: float | None) -> float:
    """The one mapping from cosine similarity to `semantic_relevance` (0-1) that every retriever uses.

    Negative similarity means unrelated for this model, so it is 0; the rest keeps its value.
    """
    if cosine is None:
        return 0.0
    return float(min(1.0, max(0.0, cosine)))


def l2_to_cosine(distance: float) -> float:
    """Cosine similarity from the L2 distance of two unit vectors."""
    return 1.0 - (distance * distance) / 2.0
