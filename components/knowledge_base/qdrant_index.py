"""`QdrantChunkIndex`: a knowledge base's chunks in qdrant-haystack's `QdrantDocumentStore`.

What goes through the integration, and what through the store's own client, and why:

Every call goes through the one client of the store's Qdrant that `qdrant_adapter` opens (the store has no public
way to be given one, and local mode lets one client open a folder), in the integration's own layout:

- writes: the integration's points (`qdrant_adapter.write_documents`, upserts: `DuplicatePolicy.OVERWRITE`) and
  deletes by its point ids, so the collection is an ordinary Haystack collection that `QdrantEmbeddingRetriever`
  reads and that a Haystack `DocumentWriter` could have filled; a new collection is created as the store creates it
  (`qdrant_adapter.create_collection`);
- dense search: `qdrant_adapter.query_dense` (what `QdrantEmbeddingRetriever` asks), with the Haystack filter
  dict translated by the integration; its score is the cosine, which is all we need;
- keyword search: `qdrant_adapter.query_sparse` on sparse vectors made offline by `keyword_terms` (BM25 term
  weights, no model download), with Qdrant's IDF modifier (`use_sparse_embeddings=True, sparse_idf=True`), on the
  chunk points only when the assistant created the collection (marked in the collection's metadata). A collection
  someone else made keeps its sparse vectors (or has none): the keyword vectors then live in the side collection
  `<index>_keywords` (written by `add_evidence`, also for chunks the user wrote), searched through the store's own
  client. On a server Qdrant's sparse index answers; local mode would score every point's vector in Python (about
  200 ms at 10,000 chunks), so there the keyword vectors are also kept as in-memory postings per folder
  (`_Postings`, read from the collection when the index opens, kept in step by the writes) and scored as Qdrant
  scores them; a filtered keyword query still goes to Qdrant;
- by id (`fetch`, the evidence): the store's own client, because the integration's
  `get_documents_by_id` always loads every vector and local mode answers any filter by scanning every point in
  Python: everything here that can be found by id is found by id (point ids are the integration's `convert_id`).

The evidence lives beside the chunks, never in their payload, so an attached collection is only read:
`<index>_sentences` holds one point per chunk (same point id) with its sentence spans and analyzer term counts in
the payload and its in-context sentence embeddings as one multivector; `<index>_terms` holds one point with the
collection's term document frequencies, chunk count and term total (one point, because local mode commits every
point to SQLite on its own: one write per batch instead of one per term; on a server several writing processes
would race on it, so there keep one ingesting process per collection).

Local mode locks a folder to one client per process, and YAML deserialisation gives every component its own store
object: `CLIENTS` is the one cache that lets every store of a folder share one client (and one lock, since local mode is
plain Python over dicts and SQLite). The store's async methods open a second client, which local mode refuses, so the
index uses the sync ones. Bulk loads and large collections belong on a Qdrant server.
"""

from __future__ import annotations

import atexit
import dataclasses
import heapq
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, nullcontext
from pathlib import Path
from typing import Any

import numpy as np
from haystack import Document, logging
from haystack.dataclasses.sparse_embedding import SparseEmbedding
from haystack.utils import Secret
from haystack_integrations.document_stores.qdrant import QdrantDocumentStore
from haystack_integrations.document_stores.qdrant.converters import (
    DENSE_VECTORS_NAME,
    SPARSE_VECTORS_NAME,
    convert_id,
    convert_qdrant_point_to_haystack_document,
)
from haystack_integrations.document_stores.qdrant.filters import convert_filters_to_qdrant
from qdrant_client import models

from components.contracts import ScoreKind
from components.knowledge_base import qdrant_adapter
from components.knowledge_base.chunk_index import (
    ChunkEvidence,
    ChunkIndex,
    IndexHit,
    TermTotals,
    check_vector,
    in_order,
    index_hit,
)
from components.knowledge_base.keyword_terms import document_sparse_vector, query_sparse_vector
from components.knowledge_base.shared_clients import SharedClient, SharedClients
from components.knowledge_base.store import KnowledgeBaseMismatch, KnowledgeBaseUnavailable, TermStatistics
from components.resilience.errors import first_line
from components.settings import Settings, get_settings
from components.text.bm25 import idf
from components.validation import clamp

logger = logging.getLogger(__name__)

# What the assistant records in the metadata of a chunk collection it creates: its keyword vectors are ours.
KEYWORD_VECTORS = "keyword_terms/bm25-crc32"
_SENTENCES_VECTOR = "sentences"
_STATISTICS_KEY = "term-statistics"
_MAX_LIMIT = 10_000
_PAGE = 1_000


def _close_local(key: str, entry: SharedClient) -> None:
    with entry.lock:
        for index in list(entry.indexes):  # closed under them: they open the folder again on their next call
            index.forget_client()
        entry.client.close()


# The Qdrant local-mode clients of this process, one per resolved folder. Local mode lets one client open a folder;
# every index of a `QdrantDocumentStore` with the same `path` uses that client and the lock that serialises calls into
# it. Indexes of a server or `:memory:` open clients of their own.
CLIENTS = SharedClients(close=_close_local)


def _local_key(store: Any) -> str | None:
    """The cache key of a store in local mode (its resolved folder), None for a server or `:memory:`."""
    if not getattr(store, "path", None) or store.location == ":memory:":
        return None
    return str(Path(store.path).expanduser().resolve())


def _acquire_local(store: Any, user: QdrantChunkIndex | None) -> SharedClient:
    """The folder's shared client entry for `user` (None: release it with no user), opened on first use; raises
    `KnowledgeBaseUnavailable` in one sentence when another process holds the folder."""
    key = _local_key(store)
    assert key is not None

    def open_client() -> Any:
        Path(key).mkdir(parents=True, exist_ok=True)
        try:
            return qdrant_adapter.open_client(store)
        except RuntimeError as exc:
            if "already accessed" not in str(exc):
                raise
            raise KnowledgeBaseUnavailable(
                f"The Qdrant local folder {key} is open in another process (local mode allows one process per "
                "folder): close that process, set QDRANT_URL to a Qdrant server, or use KB_BACKEND=pgvector, "
                "which several processes can share."
            ) from None

    return CLIENTS.acquire(key, open_client, user)


class QdrantChunkIndex(ChunkIndex):
    """The chunks of one knowledge base in a `QdrantDocumentStore` (local-mode folder, Qdrant server or cluster).

    Usage:
    ```python
    store = QdrantDocumentStore(path="data/qdrant", index="research", embedding_dim=384,
                                use_sparse_embeddings=True, sparse_idf=True, progress_bar=False)
    index = QdrantChunkIndex(store)
    index.write([record_to_document(document, chunk)], [ChunkEvidence.of(chunk)])
    hits = index.keyword("pgvector index", limit=5, query_embedding=query_vector)
    ```
    """

    backend = "qdrant"

    def __init__(
        self, document_store: Any, embedding_model: str | None = None, checks_text_analysis: bool = True
    ) -> None:
        """
        :param document_store: the integration's `QdrantDocumentStore`, read for its configuration (its own client
            is never opened: in local mode it would lock the folder that the index's shared client holds).
        :param embedding_model: the model the embeddings come from (recorded in the metadata of a collection the index
            creates; a collection made for another model is a `KnowledgeBaseMismatch`); the settings' model when None.
        :param checks_text_analysis: False for a reader that never keyword-searches or writes
            (`ChunkIndex.check_text_analysis`).
        """
        self.checks_text_analysis = checks_text_analysis
        self.document_store = document_store
        self.collection = str(document_store.index)
        self.dimension = int(document_store.embedding_dim)
        self.embedding_model = embedding_model or get_settings().embedding_model
        self.sentences_name = f"{self.collection}_sentences"
        self.terms_name = f"{self.collection}_terms"
        self.keywords_name = f"{self.collection}_keywords"
        self._local_key = _local_key(document_store)
        self._state = threading.Lock()
        self._client: Any = None
        self._lock: AbstractContextManager[Any] = nullcontext()
        self._shared: SharedClient | None = None  # local mode: the folder's entry
        self._ready = False
        # Whether keyword vectors sit on the chunk points (a collection the assistant made) or beside them.
        self._own_sparse = False

    # -- connection -------------------------------------------------------------------------------------------------

    def _connect(self) -> Any:
        """The client, with the collections set up (once; again after `drop`)."""
        with self._state:
            if self._ready:
                return self._client
            store = self.document_store
            try:
                if self._client is None:
                    if self._local_key:
                        self._shared = _acquire_local(store, self)
                        self._client, self._lock = self._shared.client, self._shared.lock
                    else:
                        # A server client connects lazily: a wrong URL shows at the first call below.
                        self._client = qdrant_adapter.open_client(store)
                        self._lock = nullcontext()
                with self._lock:
                    created = store.recreate_index or not self._client.collection_exists(self.collection)
                    self._check_collection()
                    self._set_up_store()
                    self._set_up_side_collections(created)
            except KnowledgeBaseUnavailable:
                self._release()
                raise
            except Exception as exc:  # noqa: BLE001 - any failure to open means the backend is unavailable
                self._release()
                code = getattr(exc, "status_code", None)
                if code in (401, 403):
                    raise KnowledgeBaseUnavailable(
                        f"Qdrant at {store.url} refused the API key (HTTP {code}); check QDRANT_API_KEY."
                    ) from exc
                raise KnowledgeBaseUnavailable(
                    f"Cannot reach Qdrant at {store.url or store.path or store.location}: {first_line(exc)}; check "
                    "QDRANT_URL and QDRANT_API_KEY, or use KB_BACKEND=pgvector."
                ) from exc
            self._ready = True
            self._postings()  # local mode: start reading the keyword postings now, so the first question finds them
            return self._client

    def _set_up_store(self) -> None:
        """What the store's first call does: create its collection (again, with `recreate_index`); an existing one was
        checked by `_check_collection`."""
        store = self.document_store
        if store.recreate_index or not self._client.collection_exists(self.collection):
            qdrant_adapter.create_collection(self._client, store)

    def _check_collection(self) -> None:
        """One sentence for a collection this store cannot use (other dimension or model, an older layout)."""
        store = self.document_store
        client = self._client
        if store.recreate_index:
            return
        if not client.collection_exists(self.collection):
            earlier = (f"{self.collection}_chunks", f"{self.collection}_documents")
            if all(client.collection_exists(name) for name in earlier):
                raise KnowledgeBaseMismatch(
                    f"Qdrant holds the knowledge base {self.collection!r} in the layout of an earlier version of the "
                    f"research assistant ({earlier[0]}, {earlier[1]}); re-ingest into a new collection, or delete "
                    "those collections first."
                )
            return
        config = client.get_collection(self.collection).config
        vectors = config.params.vectors
        if isinstance(vectors, dict) and DENSE_VECTORS_NAME not in vectors:
            if "dense" in vectors:
                raise KnowledgeBaseMismatch(
                    f"Qdrant collection {self.collection!r} holds chunks in the layout of an earlier version of the "
                    "research assistant; re-ingest into a new collection."
                )
            raise KnowledgeBaseMismatch(
                f"Qdrant collection {self.collection!r} has no {DENSE_VECTORS_NAME!r} vector, so it was not written "
                "by Haystack's QdrantDocumentStore and cannot be read as a knowledge base."
            )
        if store.use_sparse_embeddings and not isinstance(vectors, dict):
            # A collection Haystack's DocumentWriter filled without sparse vectors (`research kb attach`): read it as
            # it was made; keyword search then runs on the side collection that enrichment fills.
            logger.info(
                "Qdrant collection {collection} has no sparse vectors; keyword search uses {side}",
                collection=self.collection,
                side=self.keywords_name,
            )
            store.use_sparse_embeddings = False
        if not store.use_sparse_embeddings and isinstance(vectors, dict):  # the other way round is handled above
            raise KnowledgeBaseMismatch(
                f"Qdrant collection {self.collection!r} was created with use_sparse_embeddings=true; set the "
                "document store's use_sparse_embeddings to match it."
            )
        dense = vectors[DENSE_VECTORS_NAME] if isinstance(vectors, dict) else vectors
        if dense.distance != store.get_distance(store.similarity):
            raise KnowledgeBaseMismatch(
                f"Qdrant collection {self.collection!r} measures {dense.distance.value} distance, but its document "
                f"store says similarity={store.similarity!r}; set the store's similarity to match the collection."
            )
        self.check_embeddings(int(dense.size), (config.metadata or {}).get("embedding_model"))

    def _set_up_side_collections(self, created: bool) -> None:
        """The side collections; and on a chunk collection just `created` with IDF-modified sparse vectors, the
        metadata saying its keyword vectors are the assistant's (a collection found is never altered)."""
        client = self._client
        config = client.get_collection(self.collection).config
        metadata = dict(config.metadata or {})
        sparse = config.params.sparse_vectors or {}
        idf = SPARSE_VECTORS_NAME in sparse and sparse[SPARSE_VECTORS_NAME].modifier == models.Modifier.IDF
        if idf and created:
            metadata.update(keyword_vectors=KEYWORD_VECTORS, embedding_model=self.embedding_model)
            logger.info(
                "Qdrant collection {collection} takes the assistant's keyword vectors", collection=self.collection
            )
        self._own_sparse = idf and metadata.get("keyword_vectors") == KEYWORD_VECTORS
        if self._own_sparse or created:
            # Its keyword index is its own sparse vectors (or will be made by this version): the record is its own.
            analysis = self.check_text_analysis(metadata.get("text_analysis"), holds_chunks=not created)
            if created and analysis is not None:
                metadata["text_analysis"] = analysis  # what counted the terms of its keyword vectors
        if created and metadata != dict(config.metadata or {}):
            client.update_collection(self.collection, metadata=metadata)
        if not client.collection_exists(self.sentences_name):
            client.create_collection(
                self.sentences_name,
                vectors_config={
                    _SENTENCES_VECTOR: models.VectorParams(
                        size=self.dimension,
                        distance=models.Distance.COSINE,
                        multivector_config=models.MultiVectorConfig(comparator=models.MultiVectorComparator.MAX_SIM),
                    )
                },
            )
        if not client.collection_exists(self.terms_name):
            client.create_collection(self.terms_name, vectors_config={})
        if not self._own_sparse and not client.collection_exists(self.keywords_name):
            client.create_collection(
                self.keywords_name,
                vectors_config={},
                sparse_vectors_config={SPARSE_VECTORS_NAME: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                metadata={"text_analysis": self.check_text_analysis(None, holds_chunks=False)},
            )
        elif not self._own_sparse:
            # A collection found (attached: never altered) keeps its keyword index beside it, recorded there.
            kept = dict(client.get_collection(self.keywords_name).config.metadata or {})
            holds = client.count(self.keywords_name, exact=False).count > 0
            analysis = self.check_text_analysis(kept.get("text_analysis"), holds_chunks=holds)
            if analysis is not None and kept.get("text_analysis") is None:
                client.update_collection(self.keywords_name, metadata={**kept, "text_analysis": analysis})

    def _release(self, closed: bool = False) -> None:
        """Let go of the client (`closed`: it was closed under this index already); the next call opens it again."""
        if self._client is not None:
            if not closed and self._local_key:
                CLIENTS.release(self._local_key, self)
            elif not closed:
                self._client.close()
        self._client = self._shared = None
        self._lock = nullcontext()
        self._ready = False

    @property
    def client(self) -> Any:
        """The Qdrant client this index calls (local mode: its folder's shared one), opened on first use."""
        return self._connect()

    def forget_client(self) -> None:
        """The shared client was closed under this index (`CLIENTS.close_all`)."""
        with self._state:
            self._release(closed=True)

    def close(self) -> None:
        """Let go of the client (a local folder is freed when no other store of this process uses it)."""
        with self._state:
            self._release()

    def drop(self) -> None:
        """Delete the chunk collection and the evidence beside it; the next call creates them again."""
        client = self._connect()
        with self._lock:
            for name in (self.collection, self.sentences_name, self.terms_name, self.keywords_name):
                if self._shared is not None:
                    self._shared.postings.pop(name, None)
                if client.collection_exists(name):
                    client.delete_collection(name)
        with self._state:
            self._ready = False

    # -- writes -----------------------------------------------------------------------------------------------------

    def write(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        """The chunks as the integration's points (OVERWRITE; with their keyword vectors when the collection is the
        assistant's), then their evidence beside them (`add_evidence`)."""
        if not chunks:
            return
        self.check_chunks(chunks, evidence)
        client = self._connect()
        if self._own_sparse:
            chunks = [chunk if chunk.sparse_embedding is not None else _with_keywords(chunk) for chunk in chunks]
        with self._lock:
            qdrant_adapter.write_documents(client, self.document_store, chunks)
            if self._own_sparse:
                self._update_postings([(chunk.id, chunk.sparse_embedding) for chunk in chunks])
            self.add_evidence(chunks, evidence)

    def add_evidence(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        """What is kept beside the chunks: their side keyword vectors where the collection is not the assistant's,
        sentence vectors, term counts and the statistics."""
        if not chunks:
            return
        by_id = {item.chunk_id: item for item in evidence}
        for item in by_id.values():
            item.check(self.dimension)
        client = self._connect()
        with self._lock:
            old = self._stored_term_counts(client, [chunk.id for chunk in chunks])
            if not self._own_sparse:
                points, wordless, postings = [], [], []
                for chunk in chunks:
                    indices, values = document_sparse_vector(chunk.content or "")
                    postings.append((chunk.id, SparseEmbedding(indices=indices, values=values) if indices else None))
                    if not indices:
                        wordless.append(convert_id(chunk.id))
                        continue
                    vector = {SPARSE_VECTORS_NAME: models.SparseVector(indices=indices, values=values)}
                    payload = {"id": chunk.id, "meta": chunk.meta}
                    points.append(models.PointStruct(id=convert_id(chunk.id), vector=vector, payload=payload))
                _replace_points(client, self.keywords_name, points, wordless)
                self._update_postings(postings)
            points, emptied = [], []
            for chunk in chunks:
                item = by_id.get(chunk.id)
                if item is None or item.empty:
                    emptied.append(convert_id(chunk.id))
                else:
                    points.append(_evidence_point(item, self.dimension))
            _replace_points(client, self.sentences_name, points, emptied)
            new = {chunk.id: by_id[chunk.id].term_counts for chunk in chunks if chunk.id in by_id}
            self._update_statistics(client, old, {chunk_id: counts for chunk_id, counts in new.items() if counts})

    def delete(self, chunk_ids: list[str]) -> None:
        ids = sorted({str(chunk_id) for chunk_id in chunk_ids})
        if not ids:
            return
        client = self._connect()
        points = models.PointIdsList(points=[convert_id(chunk_id) for chunk_id in ids])
        with self._lock:
            old = self._stored_term_counts(client, ids)
            qdrant_adapter.delete_documents(client, self.document_store, ids)
            client.delete(self.sentences_name, points_selector=points, wait=True)
            if not self._own_sparse:
                client.delete(self.keywords_name, points_selector=points, wait=True)
            self._update_postings([(chunk_id, None) for chunk_id in ids])
            self._update_statistics(client, old, {})

    def _stored_term_counts(self, client: Any, chunk_ids: list[str]) -> dict[str, dict[str, int]]:
        """The term counts stored for these chunks (what a write or delete takes out of the statistics)."""
        found = _retrieve(client, self.sentences_name, chunk_ids, with_payload=["chunk_id", "terms"])
        return {point.payload["chunk_id"]: point.payload["terms"] for point in found if point.payload.get("terms")}

    def _update_statistics(self, client: Any, old: dict[str, dict[str, int]], new: dict[str, dict[str, int]]) -> None:
        """Take the old term counts out of the collection statistics and put the new ones in (one point)."""
        if not old and not new:
            return
        key = convert_id(_STATISTICS_KEY)
        found = client.retrieve(self.terms_name, ids=[key], with_payload=True)
        totals = _totals(found[0].payload if found else {})
        totals.add(old.values(), -1)
        totals.add(new.values())
        df = {term: count for term, count in totals.df.items() if count > 0}
        point = models.PointStruct(
            id=key, vector={}, payload={"chunks": totals.chunks, "terms": totals.terms, "df": df}
        )
        client.upsert(self.terms_name, points=[point], wait=True)

    # -- reads ------------------------------------------------------------------------------------------------------

    def _to_document(self, point: Any) -> Document:
        return convert_qdrant_point_to_haystack_document(
            point, use_sparse_embeddings=self.document_store.use_sparse_embeddings
        )

    def _with_vectors(self, with_embeddings: bool) -> Any:
        """What to ask of a point's vectors: none, or the dense one (named when the collection has sparse ones too)."""
        if not with_embeddings:
            return False
        return [DENSE_VECTORS_NAME] if self.document_store.use_sparse_embeddings else True

    def fetch(self, chunk_ids: list[str], with_embeddings: bool = False) -> list[Document]:
        ids = [str(chunk_id) for chunk_id in chunk_ids]
        if not ids:
            return []
        client = self._connect()
        with self._lock:
            points = _retrieve(
                client, self.collection, ids, with_payload=True, with_vectors=self._with_vectors(with_embeddings)
            )
        return in_order(ids, {document.id: document for document in map(self._to_document, points)})

    def dense(self, embedding: np.ndarray, limit: int, filters: dict | None = None) -> list[IndexHit]:
        vector = check_vector(embedding, self.dimension)
        client = self._connect()
        # A collection someone made with another similarity scores by it: its cosines come from the embeddings.
        cosine_scores = self.document_store.similarity == "cosine"
        kind = {"cosine": ScoreKind.COSINE, "l2": ScoreKind.L2}.get(self.document_store.similarity, ScoreKind.NONE)
        with self._lock:
            documents = qdrant_adapter.query_dense(
                client,
                self.document_store,
                vector.tolist(),
                filters,
                clamp(limit, 1, _MAX_LIMIT, "limit"),
                return_embedding=not cosine_scores,
            )
        return [
            index_hit(document, document.score, kind, document.score if cosine_scores else None, vector)
            for document in documents
        ]

    def keyword(
        self, query: str, limit: int, filters: dict | None = None, query_embedding: np.ndarray | None = None
    ) -> list[IndexHit]:
        indices, values = query_sparse_vector(query)
        if not indices:
            return []  # only stop words or punctuation: nothing to match
        vector = check_vector(query_embedding, self.dimension) if query_embedding is not None else None
        limit = clamp(limit, 1, _MAX_LIMIT, "limit")
        client = self._connect()
        with self._lock:
            postings = None if filters else self._postings()
            if postings is not None:
                scored = postings.top(indices, values, limit)
            elif self._own_sparse:
                documents = qdrant_adapter.query_sparse(
                    client, self.document_store, indices, values, filters, limit, return_embedding=vector is not None
                )
                return [index_hit(doc, float(doc.score), ScoreKind.BM25, query=vector) for doc in documents]
            else:
                points = client.query_points(
                    self.keywords_name,
                    query=models.SparseVector(indices=indices, values=values),
                    using=SPARSE_VECTORS_NAME,
                    query_filter=convert_filters_to_qdrant(filters),
                    limit=limit,
                    with_payload=["id"],
                ).points
                scored = [(point.payload["id"], float(point.score)) for point in points]
            found = {
                document.id: document
                for document in self.fetch([chunk_id for chunk_id, _ in scored], vector is not None)
            }
        return [
            index_hit(found[chunk_id], score, ScoreKind.BM25, query=vector)
            for chunk_id, score in scored
            if chunk_id in found
        ]

    def _postings(self) -> _Postings | None:
        """Local mode: the keyword postings of the collection that holds the keyword vectors, once they are read
        (None until then, and on a server). The first call (when the index opens) starts reading them in a
        background thread, a page at a time under the folder's lock; this process's writes (the only writer local
        mode allows) keep them in step from then on, the read included."""
        if self._shared is None:
            return None
        source = self.collection if self._own_sparse else self.keywords_name
        postings = self._shared.postings.get(source)
        if postings is None:
            postings = self._shared.postings[source] = _Postings()
            shared, lock = self._shared, self._lock
            threading.Thread(target=self._read_postings, args=(shared, lock, source), daemon=True).start()
        return postings if postings.ready else None

    def _read_postings(self, shared: SharedClient, lock: Any, source: str) -> None:
        postings, offset = shared.postings[source], None
        try:
            while True:
                with lock:
                    points, offset = shared.client.scroll(
                        source, limit=_PAGE, offset=offset, with_payload=["id"], with_vectors=[SPARSE_VECTORS_NAME]
                    )
                    for point in points:
                        postings.put(point.payload["id"], (point.vector or {}).get(SPARSE_VECTORS_NAME))
                if offset is None:
                    postings.ready = True
                    return
        except Exception as exc:  # noqa: BLE001 - e.g. the client closed under it: searches keep Qdrant's own scan
            shared.postings.pop(source, None)
            logger.warning("Keyword postings of {source} not read: {error}", source=source, error=first_line(exc))

    def _update_postings(self, chunks: list[tuple[str, Any]]) -> None:
        """Bring the in-memory postings (when read already) to these chunks' new keyword vectors (None: none)."""
        source = self.collection if self._own_sparse else self.keywords_name
        postings = None if self._shared is None else self._shared.postings.get(source)
        if postings is not None:
            for chunk_id, sparse in chunks:
                postings.put(chunk_id, sparse)

    def count(self) -> int:
        client = self._connect()
        with self._lock:
            return int(client.count(self.collection, exact=True).count)

    def iter_documents(self, batch_size: int = 1000, with_embeddings: bool = False) -> Iterator[list[Document]]:
        client = self._connect()
        offset = None
        while True:
            with self._lock:
                points, offset = client.scroll(
                    self.collection,
                    limit=max(1, int(batch_size)),
                    offset=offset,
                    with_payload=True,
                    with_vectors=self._with_vectors(with_embeddings),
                )
            if points:
                yield [self._to_document(point) for point in points]
            if offset is None:
                return

    # -- evidence ---------------------------------------------------------------------------------------------------

    def evidence(self, chunk_ids: list[str]) -> dict[str, ChunkEvidence]:
        """The stored evidence of these chunks, by id (one lookup)."""
        ids = sorted({str(chunk_id) for chunk_id in chunk_ids})
        if not ids:
            return {}
        client = self._connect()
        with self._lock:
            points = _retrieve(client, self.sentences_name, ids, with_payload=True, with_vectors=[_SENTENCES_VECTOR])
        return {
            point.payload["chunk_id"]: ChunkEvidence.stored(
                point.payload["chunk_id"],
                point.payload.get("spans"),
                (point.vector or {}).get(_SENTENCES_VECTOR),
                point.payload.get("terms"),
            )
            for point in points
        }

    def term_statistics(self, terms: list[str]) -> TermStatistics | None:
        wanted = sorted({str(term) for term in terms})
        # Nested payload paths read only the asked terms; a term a path cannot spell reads the whole table.
        plain = all(term.replace("-", "").replace("_", "").isalnum() for term in wanted)
        selector: Any = ["chunks", "terms", *(f"df.{term}" for term in wanted)] if plain else True
        client = self._connect()
        with self._lock:
            found = client.retrieve(self.terms_name, ids=[convert_id(_STATISTICS_KEY)], with_payload=selector)
        return _totals(found[0].payload if found else {}).statistics(wanted)


# -- what the factory asks of every backend module ---------------------------------------------------------------------


# The clients close before the interpreter tears down the modules their own finalisers need.
atexit.register(CLIENTS.close_all)


def document_store_for(settings: Settings, collection: str, dimension: int) -> Any:
    """The `QdrantDocumentStore` the settings describe for `collection`: a Qdrant server at `QDRANT_URL` (its API
    key read from the `QDRANT_API_KEY` environment variable, never stored), else the local-mode folder
    `QDRANT_PATH` (default `<data dir>/qdrant`). Keyword search needs the store's IDF-modified sparse vectors."""
    common: dict[str, Any] = {
        "index": collection,
        "embedding_dim": int(dimension),
        "use_sparse_embeddings": True,
        "sparse_idf": True,
        "progress_bar": False,
        "recreate_index": False,
    }
    if settings.qdrant_url:
        return QdrantDocumentStore(
            url=settings.qdrant_url,
            api_key=Secret.from_env_var("QDRANT_API_KEY", strict=False),
            timeout=int(settings.tool_timeout_s),
            client_kwargs={"check_compatibility": False},
            **common,
        )
    return QdrantDocumentStore(path=str(settings.qdrant_path or settings.data_dir / "qdrant"), **common)


def open_chunk_index(document_store: Any, embedding_model: str, checks_text_analysis: bool = True) -> QdrantChunkIndex:
    """The chunk index over a `QdrantDocumentStore`, its collections set up (one sentence when it cannot be)."""
    index = QdrantChunkIndex(document_store, embedding_model, checks_text_analysis)
    index.count()  # opens the client and sets the collections up now, so that errors surface here
    return index


def collection_names(document_store: Any) -> list[str]:
    """The collections of the store's Qdrant, listed by a client of our own (the store's first call creates its
    collection); in local mode the folder's shared client."""
    key = _local_key(document_store)
    if key is None:
        with closing(qdrant_adapter.open_client(document_store)) as client:
            return [found.name for found in client.get_collections().collections]
    entry = _acquire_local(document_store, None)
    try:
        with entry.lock:
            return [found.name for found in entry.client.get_collections().collections]
    finally:
        CLIENTS.release(key)


class _Postings:
    """The keyword vectors of one local-mode collection as an inverted index in memory. Local mode answers a sparse
    query with a merge join against every point's vector in Python (about 200 ms at 10,000 chunks, 1 s on a loaded
    machine); this reads only the query terms' postings and scores them as Qdrant does: its IDF modifier
    `ln((n - df + 0.5) / (df + 0.5) + 1)` over the points that have a keyword vector, summed in index order, the score
    a float32."""

    def __init__(self) -> None:
        self.terms: dict[int, dict[str, float]] = {}
        self.rows: dict[str, list[int]] = {}
        self.ready = False  # True once the collection's vectors are all read

    def put(self, chunk_id: str, sparse: Any) -> None:
        """Replace a chunk's keyword vector (anything with `indices` and `values`; None removes it)."""
        for index in self.rows.pop(chunk_id, ()):
            postings = self.terms[index]
            del postings[chunk_id]
            if not postings:
                del self.terms[index]
        if sparse is None or not len(sparse.indices):
            return
        self.rows[chunk_id] = [int(index) for index in sparse.indices]
        for index, value in zip(self.rows[chunk_id], sparse.values, strict=True):
            self.terms.setdefault(index, {})[chunk_id] = float(value)

    def top(self, indices: list[int], values: list[float], limit: int) -> list[tuple[str, float]]:
        """The `limit` best (chunk id, score) pairs for a query vector, best first."""
        count = len(self.rows)
        scores: dict[str, float] = {}
        for index, value in sorted(zip(indices, values, strict=True)):
            postings = self.terms.get(index)
            if not postings:
                continue
            weight = value * idf(count, len(postings))  # the same formula
            for chunk_id, term_weight in postings.items():
                scores[chunk_id] = scores.get(chunk_id, 0.0) + weight * term_weight
        best = heapq.nlargest(limit, scores.items(), key=lambda item: (np.float32(item[1]), item[0]))
        return [(chunk_id, float(np.float32(score))) for chunk_id, score in best]


def _totals(payload: dict[str, Any]) -> TermTotals:
    """The collection statistics of the `<index>_terms` point's payload."""
    return TermTotals(int(payload.get("chunks") or 0), int(payload.get("terms") or 0), dict(payload.get("df") or {}))


def _retrieve(client: Any, name: str, chunk_ids: list[str], **options: Any) -> list[Any]:
    """The points of these chunks in collection `name`, by point id (the integration's `convert_id`), each once."""
    return client.retrieve(name, ids=list(dict.fromkeys(map(convert_id, chunk_ids))), **options)


def _replace_points(client: Any, name: str, points: list[Any], gone: list[Any]) -> None:
    """Upload `points` into collection `name` and delete the point ids `gone` (chunks that now have nothing there)."""
    client.upload_points(name, points, batch_size=256, wait=True)
    if gone:
        client.delete(name, points_selector=models.PointIdsList(points=gone), wait=True)


def _evidence_point(item: ChunkEvidence, dimension: int) -> Any:
    spans, vectors = item.sentences(dimension)
    return models.PointStruct(
        id=convert_id(item.chunk_id),
        vector={} if vectors is None else {_SENTENCES_VECTOR: vectors.tolist()},
        payload={"chunk_id": item.chunk_id, "spans": spans, "terms": dict(item.term_counts or {})},
    )


def _with_keywords(chunk: Document) -> Document:
    """The chunk with its offline BM25 keyword vector (none when its text has no keyword)."""
    indices, values = document_sparse_vector(chunk.content or "")
    if not indices:
        return chunk
    return dataclasses.replace(chunk, sparse_embedding=SparseEmbedding(indices=indices, values=values))
