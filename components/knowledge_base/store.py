"""The knowledge base's data model (documents, chunks, hits, filters, term statistics), its errors and its one
relevance scale, shared by `KnowledgeBase`, the chunk indexes of every backend (pgvector, Milvus, Qdrant) and the
components over them, so that the same attribution and the same relevance serve every backend.
"""

from __future__ import annotations

import datetime as dt
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


def cosine_to_relevance(cosine: float | None) -> float:
    """The one mapping from cosine similarity to `semantic_relevance` (0-1) that every retriever uses.

    Negative similarity means unrelated for this model, so it is 0; the rest keeps its value.
    """
    return 0.0 if cosine is None else float(min(1.0, max(0.0, cosine)))
