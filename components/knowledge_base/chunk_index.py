"""`ChunkIndex`: a knowledge base's chunks in an integration's Haystack `DocumentStore`, and the evidence this
product keeps beside them.

The chunks are Haystack `Document`s written with the integration's own `write_documents`, so a collection the
assistant fills is an ordinary Haystack collection that Haystack's retrievers can read, and a collection Haystack's
`DocumentWriter` filled can be read by the assistant (`research kb attach`). Per backend one subclass wraps the
integration's store (`PgvectorDocumentStore`, `QdrantDocumentStore`, `MilvusDocumentStore`) and says in its
docstring where it uses the integration's retrievers and where its own query on the store's own connection or client.

A chunk the assistant wrote carries these `meta` fields (see `record_to_document`):

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
document frequency. Chunks not enriched yet have none, and the ranker copes.

What the indexes would otherwise each write lives here once: the checks of query vectors, chunks and their sentence
evidence, the cosines of sentences from the stored evidence, hits with their cosine, the term
totals an engine without aggregates keeps for BM25, and the sentence for a collection made for other embeddings.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from haystack import Document, logging

from components.contracts import ScoreKind
from components.knowledge_base.store import (
    ChunkRecord,
    DocumentRecord,
    KnowledgeBaseMismatch,
    SearchFilters,
    TermStatistics,
)
from components.resilience.guard import submit_in_thread
from components.text.analyzer import text_analysis

logger = logging.getLogger(__name__)

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

    @classmethod
    def stored(cls, chunk_id: str, spans: Any, vectors: Any, counts: Any) -> ChunkEvidence:
        """The evidence as a side table gives it back (spans as pairs, vectors as rows or None, counts or None)."""
        vectors = None if vectors is None or not len(vectors) else np.asarray(vectors, dtype=np.float32)
        spans = [(int(start), int(end)) for start, end in spans or []] if vectors is not None else []
        return cls(chunk_id, spans, vectors, dict(counts) if counts else None)

    def sentences(self, dimension: int, limit: int | None = None) -> tuple[list[list[int]], np.ndarray | None]:
        """The first `limit` sentence spans (as lists) and their float32 vectors, checked, to store; `([], None)`
        without sentence vectors."""
        if self.sentence_embeddings is None or not self.sentence_spans:
            return [], None
        self.check(dimension)
        spans = [[int(start), int(end)] for start, end in self.sentence_spans[:limit]]
        return spans, np.asarray(self.sentence_embeddings, dtype=np.float32)[:limit]

    def check(self, dimension: int) -> None:
        """ValueError in one sentence unless the sentence embeddings (when given) are one `dimension`-wide row per
        span."""
        if self.sentence_embeddings is None or not self.sentence_spans:
            return
        vectors = np.asarray(self.sentence_embeddings)
        if vectors.ndim != 2 or vectors.shape != (len(self.sentence_spans), dimension):
            rows = vectors.shape[0] if vectors.ndim else 0
            raise ValueError(
                f"Chunk {self.chunk_id!r} has {len(self.sentence_spans)} sentence spans but {rows} "
                f"sentence embeddings of shape {vectors.shape}; give one {dimension}-dimensional row per span."
            )


@dataclass
class IndexHit:
    """A chunk an index found: the Haystack `Document` (embedding not loaded), the engine's raw score (`kind` says
    what it is) and the cosine similarity to the query when the index could compute it."""

    document: Document
    raw_score: float
    kind: ScoreKind
    cosine: float | None = None


def index_hit(
    document: Document, raw_score: float, kind: ScoreKind, similarity: float | None = None, query: Any = None
) -> IndexHit:
    """The hit of a document as the engine returned it: its vectors and score left out (the hit carries the score),
    and, when the engine gave no cosine (`similarity`), the cosine of its embedding to `query` if both are there."""
    if similarity is None and query is not None and document.embedding is not None:
        similarity = cosine(document.embedding, query)
    bare = dataclasses.replace(document, embedding=None, sparse_embedding=None, score=None)
    return IndexHit(bare, float(raw_score), kind, None if similarity is None else float(similarity))


@dataclass
class TermTotals:
    """What BM25 needs of a collection, kept beside the chunks by an engine that cannot aggregate it (Milvus,
    Qdrant): how many chunks have term counts, their terms in all, and each term's document frequency."""

    chunks: int = 0
    terms: int = 0
    df: dict[str, int] = field(default_factory=dict)

    def add(self, counts: Iterable[dict[str, int] | None], sign: int = 1) -> None:
        """Count these chunks' term counts in (`sign` 1) or out (-1)."""
        for chunk in counts:
            if chunk:
                self.chunks += sign
                self.terms += sign * sum(chunk.values())
                for term in chunk:
                    self.df[term] = self.df.get(term, 0) + sign

    def statistics(self, wanted: Iterable[str]) -> TermStatistics | None:
        """The statistics of the `wanted` terms; None when no chunk has term counts."""
        if self.chunks <= 0:
            return None
        df = {term: max(0, int(self.df.get(term, 0))) for term in wanted}
        return TermStatistics(n_chunks=self.chunks, avg_terms=self.terms / self.chunks, df=df)


class ChunkIndex(ABC):
    """The chunks of one knowledge base in an integration's `DocumentStore`. Implementations are thread-safe.

    `document_store` is the integration's store as given (a component's init parameter, serialised in `pipelines.yaml`);
    the index never replaces it, and never modifies or deletes a chunk it did not write unless asked to by id.
    """

    backend: str
    collection: str  # the table / collection / index name the chunks are in (the registry's tables follow it)
    document_store: Any
    embedding_model: str
    dimension: int
    # Set when the collection is opened: it holds terms but does not say which text analysis counted them.
    text_analysis_unknown: bool = False
    # False for an index opened by a reader that never keyword-searches or writes (listing documents, reading one):
    # the keyword index's text analysis is neither checked nor recorded (`check_text_analysis`).
    checks_text_analysis: bool = True

    def check_chunks(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        """ValueError in one sentence for a chunk without an embedding of the collection's dimension, or evidence
        whose sentence vectors do not match its spans."""
        for chunk in chunks:
            check_vector(chunk.embedding, self.dimension, f"Chunk {chunk.id}")
        for item in evidence:
            item.check(self.dimension)

    def check_embeddings(self, dimension: int, model: str | None = None) -> None:
        """`KnowledgeBaseMismatch` in one sentence when the stored collection holds embeddings of another dimension or
        from another model (`model` None: not recorded)."""
        if dimension == self.dimension and (not model or not self.embedding_model or model == self.embedding_model):
            return
        raise KnowledgeBaseMismatch(
            f"The {self.backend} collection {self.collection!r} holds {dimension}-dimensional embeddings from "
            f"{model or 'an unknown model'}, but this knowledge base is set up for {self.dimension} dimensions from "
            f"{self.embedding_model or 'an unknown model'}; use another collection or re-ingest into a new one."
        )

    def check_text_analysis(self, recorded: str | None, holds_chunks: bool) -> str | None:
        """The text analysis to record beside the collection's keyword index (`analyzer.text_analysis`), checked
        against the one `recorded` there when it was made: `KnowledgeBaseMismatch` in one sentence when another
        analysis counted its terms (other stop words, stems or lemma tables would mis-score every keyword search).
        A collection that holds chunks but no record (made before analyses were recorded) cannot be checked: None,
        with a warning, and nothing is recorded for it. An index that does not check (`checks_text_analysis` False:
        its reader never counts terms) keeps whatever is `recorded`, refusing nothing and recording nothing new."""
        self.text_analysis_unknown = recorded is None and holds_chunks
        if not self.checks_text_analysis:
            return recorded
        current = text_analysis()
        if recorded is None or recorded == current:
            if recorded is None and holds_chunks:
                logger.warning(
                    "The keyword index of {collection} does not say which text analysis counted its terms; if "
                    "keyword results look wrong, re-ingest it into a new collection.",
                    collection=self.collection,
                )
                return None
            return current
        raise KnowledgeBaseMismatch(
            f"The {self.backend} collection {self.collection!r} was keyword-indexed by the text analysis "
            f"{recorded!r}, but this version analyses text with {current!r} (its stop words, stems or lemma tables "
            "differ), so its keyword scores would be wrong; re-ingest into a new collection, or use the version "
            "that built it."
        )

    # -- writes -----------------------------------------------------------------------------------------------------

    @abstractmethod
    def write(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        """Write `chunks` (replacing any chunk with the same id) and their evidence, with the integration's
        `write_documents` (policy OVERWRITE); evidence for a chunk id replaces its earlier evidence."""

    @abstractmethod
    def delete(self, chunk_ids: list[str]) -> None:
        """Remove these chunks and their evidence (ids that do not exist are ignored)."""

    @abstractmethod
    def add_evidence(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        """Replace the evidence of these stored chunks without writing the chunks themselves: what enrichment
        adds beside an attached collection's rows (and what keyword search there needs)."""

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

    @abstractmethod
    def evidence(self, chunk_ids: list[str]) -> dict[str, ChunkEvidence]:
        """The stored evidence of these chunks (chunks without any are absent)."""

    def sentence_similarities(
        self, chunk_ids: list[str], query_embedding: np.ndarray
    ) -> dict[str, list[tuple[int, int, float]]]:
        """Per chunk id, `(start, end, cosine)` of each stored sentence to the query, in sentence order: the chunks'
        sentence vectors read by id in one lookup (`evidence`) and compared here."""
        query = check_vector(query_embedding, self.dimension)
        similarities = {}
        for chunk_id, item in self.evidence(chunk_ids).items():
            if item.sentence_embeddings is None or len(item.sentence_embeddings) != len(item.sentence_spans):
                continue
            values = cosines(np.asarray(item.sentence_embeddings, dtype=np.float32), query)
            similarities[chunk_id] = [
                (int(start), int(end), float(value))
                for (start, end), value in zip(item.sentence_spans, values, strict=True)
            ]
        return similarities

    @abstractmethod
    def term_statistics(self, terms: list[str]) -> TermStatistics | None:
        """Collection statistics for BM25 over the analyzer's terms; None while no chunk has term counts."""

    def ranking_evidence(
        self, chunk_ids: list[str], query_embedding: np.ndarray, terms: list[str]
    ) -> tuple[dict[str, list[tuple[int, int, float]]], TermStatistics | None]:
        """What the ranker asks once per question: `sentence_similarities(chunk_ids, query_embedding)` and
        `term_statistics(terms)`. Here the statistics are read in a worker thread beside the sentences (two
        independent lookups); an engine that can answer both in one round trip overrides this."""
        pending = submit_in_thread(lambda: self.term_statistics(terms))
        sentences = self.sentence_similarities(chunk_ids, query_embedding)
        return sentences, pending.result()

    # -- housekeeping -----------------------------------------------------------------------------------------------

    def ensure_vector_index(self) -> bool:
        """Build a vector index deferred until after a bulk load; True when it exists (or is not needed)."""
        return True

    @abstractmethod
    def drop(self) -> None:
        """Delete the collection and the evidence beside it (tests and benchmarks)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections, clients and file locks."""


# -- conversions shared by every backend ------------------------------------------------------------------------------


def check_vector(embedding: Any, dimension: int, what: str = "The query embedding") -> np.ndarray:
    """`embedding` as a flat float32 vector; ValueError in one sentence when it is missing or of another size."""
    if embedding is None:
        raise ValueError(f"{what} has no embedding; embed it first.")
    vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
    if vector.shape[0] != dimension:
        raise ValueError(f"{what} has {vector.shape[0]} embedding dimensions; the collection needs {dimension}.")
    return vector


def cosines(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The cosine of each row of `matrix` to `query` (zero vectors score 0)."""
    norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    return (matrix @ query) / np.maximum(norms, 1e-12)


def cosine(vector: Any, query: np.ndarray) -> float:
    """The cosine of one stored vector to `query`."""
    return float(cosines(np.asarray(vector, dtype=np.float32).reshape(1, -1), query)[0])


def batches(items: list[Any], size: int) -> Iterator[list[Any]]:
    """`items` in slices of `size` (what one engine call takes)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def in_order(ids: Iterable[str], found: dict[str, Document]) -> list[Document]:
    """The documents of `ids` that were found, in the order given, each once."""
    return [found[chunk_id] for chunk_id in dict.fromkeys(ids) if chunk_id in found]


def date_ordinal(value: dt.date | None) -> int:
    """The stored form of a document date for range filters: its proleptic ordinal, 0 without a date."""
    return 0 if value is None else value.toordinal()


def record_to_document(document: DocumentRecord, chunk: ChunkRecord, *, with_embedding: bool = True) -> Document:
    """The Haystack `Document` a stored chunk is written as (meta laid out as the module docstring says).

    Not `components.contracts.chunk_to_document`, which turns a search result (`ContextChunk`) into the `Document`
    the pipelines pass on; this one is the storage layout."""
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
    wanted = with_embedding and chunk.embedding is not None
    embedding = np.asarray(chunk.embedding, dtype=np.float32).tolist() if wanted else None
    return Document(id=chunk.chunk_id, content=chunk.text, meta=meta, embedding=embedding)


def document_to_record(
    doc: Document,
    document_id: str | None = None,
    chunk_index: int | None = None,
    evidence: ChunkEvidence | None = None,
) -> ChunkRecord:
    """The `ChunkRecord` a Haystack `Document` holds, with its stored `evidence` when given; `document_id` /
    `chunk_index` come from its meta unless given (a chunk written by someone else has them from the registry)."""
    meta = dict(doc.meta or {})
    own = {key: value for key, value in meta.items() if key not in DOCUMENT_FIELDS_ON_CHUNKS}
    return ChunkRecord(
        chunk_id=str(doc.id),
        document_id=str(document_id if document_id is not None else meta.get("document_id", "")),
        chunk_index=int(chunk_index if chunk_index is not None else meta.get("chunk_index", 0) or 0),
        text=doc.content or "",
        embedding=None if doc.embedding is None else np.asarray(doc.embedding, dtype=np.float32),
        metadata=own,
        sentence_spans=list(evidence.sentence_spans) if evidence else [],
        sentence_embeddings=evidence.sentence_embeddings if evidence else None,
        term_counts=evidence.term_counts if evidence else None,
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
