"""`KnowledgeBase`: the knowledge base every component reads, composed of a `ChunkIndex` (the integration's
document store) and the `DocumentRegistry` (the documents, in PostgreSQL).

Every backend is the same class: what differs between pgvector, Qdrant and Milvus is the chunk index it is given.
Writes keep the registry row as the commit point: upsert = index.write -> registry.put (the graph's `also` inside
its transaction) -> index.delete(the replaced version's stale chunks); delete = registry.delete -> index.delete.
Search hits get their document and its chunk count from the registry in one query; a hit whose document the
registry does not know (a crash between the two writes) is dropped.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from haystack import logging

from components.knowledge_base.attach import ATTACHED
from components.knowledge_base.chunk_index import (
    ChunkEvidence,
    ChunkIndex,
    IndexHit,
    check_vector,
    document_to_record,
    record_to_document,
    search_filters_to_haystack,
)
from components.knowledge_base.enrichment import KnowledgeBaseEnricher
from components.knowledge_base.registry import DocumentRegistry
from components.knowledge_base.store import (
    ChunkHit,
    ChunkRecord,
    DocumentRecord,
    DocumentSummary,
    SearchFilters,
    TermStatistics,
)

logger = logging.getLogger(__name__)


class ProtectedDocument(ValueError):
    """The document belongs to an attached collection: the assistant reads it but never replaces or deletes it."""


class KnowledgeBase:
    """A knowledge base: chunks in an integration's document store (through its `ChunkIndex`), documents in the
    registry. Thread-safe when its index is. `backend`, `collection`, `embedding_model` and `dimension` name it.

    Usage:
    ```python
    from components.knowledge_base.factory import knowledge_base_for

    kb = knowledge_base_for(PgvectorDocumentStore(table_name="research", embedding_dimension=384))
    kb.upsert_document(document, chunks)
    hits = kb.dense_search(query_vector, limit=10, filters=SearchFilters(doc_types=("pdf",)))
    ```
    """

    def __init__(self, index: ChunkIndex, registry: DocumentRegistry, document_field: str | None = None) -> None:
        self.index = index
        self.registry = registry
        # For a collection someone else wrote: the meta field naming a chunk's document (see `attach.py`).
        self.document_field = document_field
        self._recognised = False
        self._recognise_lock = threading.Lock()
        self.backend = index.backend
        self.collection = registry.collection
        self.embedding_model = index.embedding_model
        self.dimension = int(index.dimension)

    # -- writes ---------------------------------------------------------------------------------------------------

    def _check_chunks(self, document: DocumentRecord, chunks: list[ChunkRecord]) -> None:
        for chunk in chunks:
            if chunk.document_id != document.document_id:
                raise ValueError(
                    f"Chunk {chunk.chunk_id!r} belongs to {chunk.document_id!r}, not {document.document_id!r}."
                )
            check_vector(chunk.embedding, self.dimension, f"Chunk {chunk.chunk_id!r}")
            ChunkEvidence.of(chunk).check(self.dimension)

    def upsert_document(
        self, document: DocumentRecord, chunks: list[ChunkRecord], *, also: Callable[[Any], None] | None = None
    ) -> None:
        """Write the chunks to the index, then replace the document in the registry (`also(conn)` in its
        transaction), then delete the chunks of the replaced version that this one no longer has."""
        self._check_chunks(document, chunks)
        replaced = self.registry.find_by_source(document.source)
        if replaced is not None and (replaced.metadata or {}).get(ATTACHED):
            raise ProtectedDocument(
                f"{document.source} is a document of the attached collection {self.collection!r}; the assistant "
                "does not replace what another pipeline wrote. Ingest it under another source."
            )
        ordered = sorted(chunks, key=lambda chunk: chunk.chunk_index)
        if ordered:
            self.index.write(
                [record_to_document(document, chunk) for chunk in ordered], [ChunkEvidence.of(c) for c in ordered]
            )
        stale = self.registry.put(document, [chunk.chunk_id for chunk in ordered], also=also)
        if stale:
            self.index.delete(stale)

    def delete_document(self, document_id: str, *, also: Callable[[Any], None] | None = None) -> bool:
        """Remove the document from the registry (`also(conn)` in its transaction), then its chunks from the index.

        A document recognised in an attached collection is not the assistant's to delete: `ProtectedDocument`."""
        found = self.registry.get(document_id)
        if found is not None and (found[0].metadata or {}).get(ATTACHED):
            raise ProtectedDocument(
                f"{found[0].title!r} belongs to the attached collection {self.collection!r}, which another pipeline "
                "wrote; delete it there (its document store's delete_documents), then run `research kb enrich`."
            )
        chunk_ids = self.registry.delete(document_id, also=also)
        if chunk_ids is None:
            return False
        if chunk_ids:
            self.index.delete(chunk_ids)
        return True

    # -- documents ------------------------------------------------------------------------------------------------

    def find_by_source(self, source: str) -> DocumentRecord | None:
        """The document ingested from `source` (path, URL or arXiv id), if any."""
        return self.registry.find_by_source(source)

    def get_document(
        self, document_id: str, with_evidence: bool = False
    ) -> tuple[DocumentRecord, list[ChunkRecord]] | None:
        """The document (with its text) and its chunks in order, embeddings not loaded; with `with_evidence`, the
        chunks' stored sentence spans, in-context sentence vectors and term counts (what the graph extractor reads
        when it extracts the document again)."""
        found = self.registry.get(document_id)
        if found is None:
            return None
        document, chunk_ids = found
        position = {chunk_id: index for index, chunk_id in enumerate(chunk_ids)}
        evidence = self.index.evidence(chunk_ids) if with_evidence else {}
        chunks = [
            document_to_record(doc, document.document_id, position[str(doc.id)], evidence.get(str(doc.id)))
            for doc in self.index.fetch(chunk_ids)
            if str(doc.id) in position
        ]
        chunks.sort(key=lambda chunk: position[chunk.chunk_id])
        return document, chunks

    def list_documents(
        self, limit: int = 20, offset: int = 0, search: str | None = None, filters: SearchFilters | None = None
    ) -> tuple[list[DocumentSummary], int]:
        """A page of documents (newest first) with chunk counts, and the total that match."""
        self.recognise_on_first_use()
        return self.registry.list(limit, offset, search, filters)

    def count_chunks(self) -> int:
        """How many chunks the collection's documents hold: the chunks search can return. Chunks a crash left in
        the index without a document record are not counted (`count_index_chunks` counts them too)."""
        return self.registry.count_chunks()

    def count_index_chunks(self) -> int:
        """How many chunks the index holds, with or without a document record."""
        return self.index.count()

    def count_documents(self) -> int:
        """How many documents the collection holds."""
        return self.registry.count()

    def iter_chunks(self, batch_size: int = 1000) -> Iterator[tuple[DocumentRecord, list[ChunkRecord]]]:
        """Every document (with its text) and its chunks with embeddings and evidence, in document-id order."""
        size = max(1, int(batch_size) // 10)
        documents = self.registry.iter_documents(batch_size=size)
        while batch := list(itertools.islice(documents, size)):
            ids = [chunk_id for _, chunk_ids in batch for chunk_id in chunk_ids]
            found = {str(doc.id): doc for doc in self.index.fetch(ids, with_embeddings=True)}
            evidence = self.index.evidence(ids)
            for document, chunk_ids in batch:
                chunks = [
                    document_to_record(found[chunk_id], document.document_id, position, evidence.get(chunk_id))
                    for position, chunk_id in enumerate(chunk_ids)
                    if chunk_id in found
                ]
                yield document, chunks

    # -- searches -------------------------------------------------------------------------------------------------

    def _hits(self, found: list[IndexHit]) -> list[ChunkHit]:
        """Index hits with their documents (one registry query); hits of unknown documents are dropped."""
        owners: dict[str, tuple[str, int]] = {}
        unknown = []
        for hit in found:
            meta = hit.document.meta or {}
            if meta.get("document_id"):
                owners[str(hit.document.id)] = (str(meta["document_id"]), int(meta.get("chunk_index") or 0))
            else:
                unknown.append(str(hit.document.id))
        owners.update(self.registry.chunk_documents(unknown))  # no query without ids
        documents = self.registry.get_many([owner for owner, _ in owners.values()])
        hits = []
        for hit in found:
            owner = owners.get(str(hit.document.id))
            if owner is None or owner[0] not in documents:
                continue
            document, total = documents[owner[0]]
            chunk = document_to_record(hit.document, *owner)
            hits.append(ChunkHit(chunk, document, total, hit.raw_score, hit.kind, hit.cosine))
        return hits

    def recognise_on_first_use(self) -> None:
        """Record the documents of a collection someone else wrote (Haystack's `DocumentWriter`) in the registry the
        first time it is read: an index with chunks and a registry without documents. Fast (no model); the
        evidence and the graph come from `research kb enrich`."""
        if self._recognised:
            return
        with self._recognise_lock:
            if self._recognised:
                return
            if self.registry.count() == 0 and self.index.count() > 0:
                report = KnowledgeBaseEnricher(self, hooks=[], document_field=self.document_field).recognise()
                logger.info(
                    "Attached collection {collection}: {summary}", collection=self.collection, summary=report.summary()
                )
            self._recognised = True

    def _chunk_filters(self, filters: SearchFilters | None) -> dict | None:
        """Haystack filters for `filters`: on the meta of the assistant's own chunks, or, for the chunks of
        recognised documents (which carry none of it), on their ids as the registry lists them."""
        own = search_filters_to_haystack(filters)
        if own is None or filters is None:
            return own
        attached = self.registry.attached_chunk_ids(filters)
        if attached is None:
            return own
        return {"operator": "OR", "conditions": [own, {"field": "id", "operator": "in", "value": attached}]}

    def dense_search(self, embedding: np.ndarray, limit: int, filters: SearchFilters | None = None) -> list[ChunkHit]:
        """The `limit` chunks nearest to `embedding`, best first."""
        vector = check_vector(embedding, self.dimension)
        self.recognise_on_first_use()
        return self._hits(self.index.dense(vector, max(1, int(limit)), self._chunk_filters(filters)))

    def keyword_search(
        self,
        query: str,
        limit: int,
        filters: SearchFilters | None = None,
        query_embedding: np.ndarray | None = None,
    ) -> list[ChunkHit]:
        """The `limit` best full-text matches for `query`, best first; fills `cosine` when given the embedding."""
        vector = None if query_embedding is None else check_vector(query_embedding, self.dimension)
        self.recognise_on_first_use()
        found = self.index.keyword(query or "", max(1, int(limit)), self._chunk_filters(filters), vector)
        return self._hits(found)

    # -- ranking evidence -----------------------------------------------------------------------------------------

    def sentence_similarities(
        self, chunk_ids: list[str], query_embedding: np.ndarray
    ) -> dict[str, list[tuple[int, int, float]]]:
        """Per chunk id, `(start, end, cosine)` of each stored sentence to the query, in one round trip; `{}` when
        the index keeps no sentence vectors (the ranker then computes what it can itself)."""
        return self.index.sentence_similarities(chunk_ids, check_vector(query_embedding, self.dimension))

    def term_statistics(self, terms: list[str]) -> TermStatistics | None:
        """BM25's collection statistics for `terms` (analyzer terms); None when the index keeps none."""
        return self.index.term_statistics(terms)

    def ranking_evidence(
        self, chunk_ids: list[str], query_embedding: np.ndarray, terms: list[str]
    ) -> tuple[dict[str, list[tuple[int, int, float]]], TermStatistics | None]:
        """`sentence_similarities(chunk_ids, query_embedding)` and `term_statistics(terms)` together, as the ranker
        asks them once per question (on pgvector on one connection, with no worker thread)."""
        return self.index.ranking_evidence(chunk_ids, check_vector(query_embedding, self.dimension), terms)

    # -- housekeeping ---------------------------------------------------------------------------------------------

    def ensure_vector_index(self) -> bool:
        """Build the vector index an index defers until after bulk loads (ingestion calls it once a run); True when
        it exists."""
        return self.index.ensure_vector_index()

    def drop(self) -> None:
        """Delete the chunks, their evidence and the documents (tests and `research docs --drop`)."""
        self.index.drop()
        self.registry.drop()

    def close(self) -> None:
        """Release connections and file locks."""
        self.index.close()
