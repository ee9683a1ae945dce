"""The knowledge base on Qdrant: a local-mode folder by default (`QDRANT_PATH`), any Qdrant server by `QDRANT_URL`.

Three collections per knowledge base: `<name>_chunks` with a named dense vector (cosine) and a named sparse
vector whose IDF Qdrant applies itself (`Modifier.IDF`), `<name>_documents` (payload only, one point per document
with its chunk count and chunk ids) and `<name>_sources` (source -> document id). Writes find what they replace by
id, never by a filter: local mode answers a filter by scanning every point in Python. Keyword search runs on
sparse vectors made offline by `keyword_terms` (BM25 term weights, no model download).

Why raw qdrant-client rather than qdrant-haystack's `QdrantDocumentStore` (read and measured, qdrant-haystack
13.1.0): the Haystack store opens its own client, and local mode locks a folder to one client, so the chunk and
document collections could not share a folder; it needs a Haystack sparse-embedder component for keyword search
and does not set the IDF modifier; its retrievers return Documents whose scores would be re-parsed into chunks.
Raw calls keep one client per folder, translate filters and scores in one place, and page through all points.

Local mode is brute force in Python and single-process (the folder's lock is reported as one sentence), and it
commits every point to SQLite on its own (about 40 points/s here): bulk loads belong on a Qdrant server.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from haystack import logging

from components.contracts import ScoreKind
from components.knowledge_base.keyword_terms import document_sparse_vector, query_sparse_vector
from components.knowledge_base.store import (
    ChunkHit,
    ChunkRecord,
    DocumentRecord,
    DocumentSummary,
    KnowledgeBaseMismatch,
    KnowledgeBaseStore,
    KnowledgeBaseUnavailable,
    SearchFilters,
)
from components.knowledge_base.stored_fields import (
    check_collection_name,
    date_to_ordinal,
    document_fields,
    document_from_fields,
    json_safe,
    matches_search,
)
from components.settings import Settings, get_settings

logger = logging.getLogger(__name__)

_ID_NAMESPACE = uuid.UUID("5b0f4c1e-2f6a-4c7e-9a51-0d3c1b7f9e21")
_BATCH = 256
_PAGE = 1_000


def point_id(key: str) -> str:
    """The Qdrant point id of a chunk or document id (Qdrant accepts only integers and UUIDs)."""
    return str(uuid.uuid5(_ID_NAMESPACE, key))


class QdrantAuthError(KnowledgeBaseUnavailable):
    """The Qdrant server refused the API key (HTTP 401 or 403)."""


class _SharedClient:
    """One client per local folder or server, shared by every store of the process, with a lock for local mode."""

    _registry: dict[str, _SharedClient] = {}
    _registry_lock = threading.Lock()

    def __init__(self, key: str, client: Any, local: bool) -> None:
        self.key = key
        self.client = client
        self.local = local
        self.users = 0
        # Local mode is plain Python over dicts and files; one call at a time keeps it consistent.
        self.lock: threading.RLock | _NoLock = threading.RLock() if local else _NoLock()

    @classmethod
    def acquire(cls, settings: Settings) -> _SharedClient:
        from qdrant_client import QdrantClient

        if settings.qdrant_url:
            key = f"url:{settings.qdrant_url}"
            local = False
        else:
            folder = (settings.qdrant_path or settings.data_dir / "qdrant").expanduser().resolve()
            key = f"path:{folder}"
            local = True
        with cls._registry_lock:
            shared = cls._registry.get(key)
            if shared is None:
                if local:
                    folder.mkdir(parents=True, exist_ok=True)
                    try:
                        client = QdrantClient(path=str(folder))
                    except RuntimeError as exc:
                        if "already accessed" not in str(exc):
                            raise
                        raise KnowledgeBaseUnavailable(
                            f"The Qdrant local folder {folder} is open in another process (local mode allows one "
                            "process per folder): close that process, set QDRANT_URL to a Qdrant server, or use "
                            "KB_BACKEND=pgvector, which several processes can share."
                        ) from None
                else:
                    api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
                    client = QdrantClient(
                        url=settings.qdrant_url,
                        api_key=api_key,
                        timeout=int(settings.tool_timeout_s),
                        check_compatibility=False,
                    )
                shared = cls._registry[key] = _SharedClient(key, client, local)
            shared.users += 1
            return shared

    def release(self) -> None:
        with self._registry_lock:
            self.users -= 1
            if self.users > 0:
                return
            self._registry.pop(self.key, None)
        with self.lock:
            # Closing the last local client lets go of the folder's lock, so another process may open it.
            self.client.close()


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class QdrantKnowledgeBase(KnowledgeBaseStore):
    """The knowledge base in Qdrant (local-mode folder, Qdrant server or cluster).

    Usage:
    ```python
    store = QdrantKnowledgeBase("research", get_settings())
    store.upsert_document(document, chunks)  # chunks carry their embeddings
    hits = store.keyword_search("pgvector index", limit=5, query_embedding=query_vector)
    ```
    """

    backend = "qdrant"

    def __init__(
        self,
        collection: str,
        settings: Settings | None = None,
        *,
        dimension: int = 384,
        embedding_model: str | None = None,
    ) -> None:
        self._settings = settings or get_settings()
        self.collection = check_collection_name(collection)
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self.dimension = int(dimension)
        self.embedding_model = embedding_model or self._settings.embedding_model
        self.chunks_name = f"{collection}_chunks"
        self.documents_name = f"{collection}_documents"
        self.sources_name = f"{collection}_sources"
        # In-context sentence vectors for the ranker, one point per sentence (chunk payloads stay small).
        self.sentences_name = f"{collection}_sentences"
        self._lock = threading.Lock()
        self._shared: _SharedClient | None = None
        self._connect()

    # -- connection ---------------------------------------------------------------------------------------------

    def describe(self) -> str:
        """Where the knowledge base lives, for status pages (never the API key)."""
        if self._settings.qdrant_url:
            return f"Qdrant at {self._settings.qdrant_url}, collection {self.collection}"
        folder = self._settings.qdrant_path or self._settings.data_dir / "qdrant"
        return f"Qdrant local mode in {folder}, collection {self.collection}"

    def _connect(self) -> _SharedClient:
        with self._lock:
            if self._shared is not None:
                return self._shared
            shared = _SharedClient.acquire(self._settings)
            try:
                with shared.lock:
                    self._ensure_collections(shared.client, shared.local)
            except KnowledgeBaseUnavailable:
                shared.release()
                raise
            except Exception as exc:  # noqa: BLE001 - any failure to open means the backend is unavailable
                shared.release()
                code = getattr(exc, "status_code", None)
                if code in (401, 403):
                    raise QdrantAuthError(
                        f"Qdrant at {self._settings.qdrant_url} refused the API key (HTTP {code}); "
                        "check QDRANT_API_KEY."
                    ) from exc
                where = self._settings.qdrant_url or "the local folder"
                raise KnowledgeBaseUnavailable(
                    f"Cannot reach Qdrant at {where}: {_first_line(exc)}; check QDRANT_URL and QDRANT_API_KEY, or "
                    "use KB_BACKEND=pgvector."
                ) from exc
            self._shared = shared
            return shared

    def _ensure_collections(self, client: Any, local: bool) -> None:
        from qdrant_client import models

        if not client.collection_exists(self.chunks_name):
            client.create_collection(
                self.chunks_name,
                vectors_config={"dense": models.VectorParams(size=self.dimension, distance=models.Distance.COSINE)},
                sparse_vectors_config={"sparse": models.SparseVectorParams(modifier=models.Modifier.IDF)},
                metadata={"embedding_model": self.embedding_model, "dimension": self.dimension},
            )
            if not local:
                for field, schema in (
                    ("document_id", models.PayloadSchemaType.KEYWORD),
                    ("doc_type", models.PayloadSchemaType.KEYWORD),
                    ("doc_date", models.PayloadSchemaType.INTEGER),
                ):
                    client.create_payload_index(self.chunks_name, field_name=field, field_schema=schema)
        else:
            info = client.get_collection(self.chunks_name)
            vectors = info.config.params.vectors
            dense = vectors.get("dense") if isinstance(vectors, dict) else None
            dim = int(dense.size) if dense is not None else 0
            stored_model = (info.config.metadata or {}).get("embedding_model")
            if dim != self.dimension or (stored_model and stored_model != self.embedding_model):
                raise KnowledgeBaseMismatch(
                    f"Qdrant collection {self.collection!r} holds {dim}-dimensional embeddings from "
                    f"{stored_model or 'an unknown model'}, but this knowledge base is set up for {self.dimension} "
                    f"dimensions from {self.embedding_model}; use another collection or re-ingest into a new one."
                )
        if not client.collection_exists(self.sentences_name):
            client.create_collection(
                self.sentences_name,
                vectors_config=models.VectorParams(size=self.dimension, distance=models.Distance.COSINE),
            )
            if not local:
                for field in ("chunk_id", "chunk_point"):
                    client.create_payload_index(
                        self.sentences_name, field_name=field, field_schema=models.PayloadSchemaType.KEYWORD
                    )
        if not client.collection_exists(self.sources_name):
            # source -> document id, so replacing a re-ingested source is a lookup, not a scan.
            client.create_collection(self.sources_name, vectors_config={})
        if not client.collection_exists(self.documents_name):
            client.create_collection(self.documents_name, vectors_config={})
            if not local:
                for field, schema in (
                    ("source", models.PayloadSchemaType.KEYWORD),
                    ("doc_type", models.PayloadSchemaType.KEYWORD),
                    ("doc_date", models.PayloadSchemaType.INTEGER),
                ):
                    client.create_payload_index(self.documents_name, field_name=field, field_schema=schema)

    def _call(self, work: Callable[[Any], Any]) -> Any:
        shared = self._connect()
        with shared.lock:
            return work(shared.client)

    def close(self) -> None:
        """Release the client (and the local folder when no other store of this process uses it)."""
        with self._lock:
            shared, self._shared = self._shared, None
        if shared is not None:
            shared.release()

    def drop(self) -> None:
        """Delete the collection's chunks and documents (tests and `research kb copy --replace`)."""

        def drop(client: Any) -> None:
            for name in (self.chunks_name, self.documents_name, self.sources_name, self.sentences_name):
                client.delete_collection(name)
            self._ensure_collections(client, self._shared.local if self._shared else True)

        self._call(drop)

    # -- filters ------------------------------------------------------------------------------------------------

    @staticmethod
    def _filter(filters: SearchFilters | None, *extra: Any) -> Any:
        from qdrant_client import models

        must: list[Any] = list(extra)
        if filters is not None and not filters.empty:
            if filters.doc_types:
                must.append(models.FieldCondition(key="doc_type", match=models.MatchAny(any=list(filters.doc_types))))
            if filters.date_from or filters.date_to:
                must.append(
                    models.FieldCondition(
                        key="doc_date",
                        range=models.Range(
                            gte=date_to_ordinal(filters.date_from) if filters.date_from else 1,
                            lte=date_to_ordinal(filters.date_to) if filters.date_to else None,
                        ),
                    )
                )
            if filters.document_ids:
                must.append(
                    models.FieldCondition(key="document_id", match=models.MatchAny(any=list(filters.document_ids)))
                )
        return models.Filter(must=must) if must else None

    @staticmethod
    def _is(field: str, value: str) -> Any:
        from qdrant_client import models

        return models.FieldCondition(key=field, match=models.MatchValue(value=value))

    # -- writes -------------------------------------------------------------------------------------------------

    def upsert_document(
        self,
        document: DocumentRecord,
        chunks: list[ChunkRecord],
        *,
        also: Callable[[Any], None] | None = None,
    ) -> None:
        from qdrant_client import models

        points = [self._chunk_point(document, chunk) for chunk in chunks]
        sentence_points = self._sentence_points(chunks)
        fields = document_fields(document, len(chunks))
        # Qdrant payloads have no size cap: keep the whole text.
        fields.update(text=document.text or "", text_in_chunks=False)
        keep = [point.id for point in points]

        def write(client: Any) -> None:
            old_ids = self._chunk_ids_of(client, document.document_id)
            # New chunks go in before stale ones leave, so a reader never sees the document without chunks.
            for start in range(0, len(points), _BATCH):
                client.upsert(self.chunks_name, points=points[start : start + _BATCH], wait=True)
            if old_ids:
                self._delete_sentences(client, old_ids)
            for start in range(0, len(sentence_points), _BATCH):
                client.upsert(self.sentences_name, points=sentence_points[start : start + _BATCH], wait=True)
            stale = sorted(set(old_ids) - set(keep))
            if stale:
                client.delete(self.chunks_name, points_selector=models.PointIdsList(points=stale), wait=True)
            # As in every backend, a new document replaces an older one ingested from the same source.
            source_key = point_id(f"source:{document.source}")
            previous = client.retrieve(self.sources_name, ids=[source_key], with_payload=True)
            if previous and previous[0].payload.get("document_id") != document.document_id:
                self._delete(client, previous[0].payload["document_id"])
            fields["chunk_ids"] = keep
            client.upsert(
                self.documents_name,
                points=[models.PointStruct(id=point_id(document.document_id), vector={}, payload=fields)],
                wait=True,
            )
            source_point = models.PointStruct(id=source_key, vector={}, payload={"document_id": document.document_id})
            client.upsert(self.sources_name, points=[source_point], wait=True)

        self._call(write)
        if also is not None:
            also(None)

    def _chunk_point(self, document: DocumentRecord, chunk: ChunkRecord) -> Any:
        from qdrant_client import models

        if chunk.embedding is None:
            raise ValueError(f"Chunk {chunk.chunk_id} has no embedding; embed chunks before writing them.")
        vector = np.asarray(chunk.embedding, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.dimension:
            raise ValueError(
                f"Chunk {chunk.chunk_id} has {vector.shape[0]} dimensions; the store expects {self.dimension}."
            )
        if chunk.document_id != document.document_id:
            raise ValueError(f"Chunk {chunk.chunk_id} belongs to {chunk.document_id}, not {document.document_id}.")
        indices, values = document_sparse_vector(chunk.text)
        vectors: dict[str, Any] = {"dense": vector.tolist()}
        if indices:
            vectors["sparse"] = models.SparseVector(indices=indices, values=values)
        return models.PointStruct(
            id=point_id(chunk.chunk_id),
            vector=vectors,
            payload={
                "chunk_id": chunk.chunk_id,
                "document_id": document.document_id,
                "chunk_index": int(chunk.chunk_index),
                "doc_type": document.doc_type or "",
                "doc_date": date_to_ordinal(document.date),
                "text": chunk.text,
                "metadata": json_safe(chunk.metadata),
            },
        )

    @staticmethod
    def _sentence_points(chunks: list[ChunkRecord]) -> list[Any]:
        from qdrant_client import models

        points = []
        for chunk in chunks:
            if chunk.sentence_embeddings is None or not chunk.sentence_spans:
                continue
            vectors = np.asarray(chunk.sentence_embeddings, dtype=np.float32)
            if vectors.shape[0] != len(chunk.sentence_spans):
                raise ValueError(
                    f"Chunk {chunk.chunk_id} has {len(chunk.sentence_spans)} sentence spans but "
                    f"{vectors.shape[0]} sentence embeddings."
                )
            for index, ((start, end), vector) in enumerate(zip(chunk.sentence_spans, vectors, strict=True)):
                points.append(
                    models.PointStruct(
                        id=point_id(f"{chunk.chunk_id}\x00{index}"),
                        vector=vector.tolist(),
                        payload={
                            "chunk_id": chunk.chunk_id,
                            "chunk_point": point_id(chunk.chunk_id),
                            "idx": index,
                            "start": int(start),
                            "end": int(end),
                        },
                    )
                )
        return points

    def _delete_sentences(self, client: Any, chunk_points: list[str]) -> None:
        from qdrant_client import models

        condition = models.FieldCondition(key="chunk_point", match=models.MatchAny(any=list(chunk_points)))
        selector = models.FilterSelector(filter=models.Filter(must=[condition]))
        client.delete(self.sentences_name, points_selector=selector, wait=True)

    def sentence_similarities(
        self, chunk_ids: list[str], query_embedding: np.ndarray
    ) -> dict[str, list[tuple[int, int, float]]]:
        """Per chunk id, `(start, end, cosine)` of its stored sentences, in order; one filtered query."""
        from qdrant_client import models

        ids = sorted({str(chunk_id) for chunk_id in chunk_ids})
        if not ids:
            return {}
        vector = self._query_vector(query_embedding)
        condition = models.FieldCondition(key="chunk_id", match=models.MatchAny(any=ids))
        response = self._call(
            lambda client: client.query_points(
                self.sentences_name,
                query=vector.tolist(),
                query_filter=models.Filter(must=[condition]),
                limit=min(10_000, 64 * len(ids)),
                with_payload=True,
            )
        )
        rows: dict[str, list[tuple[int, int, int, float]]] = {}
        for point in response.points:
            payload = point.payload
            rows.setdefault(payload["chunk_id"], []).append(
                (int(payload["idx"]), int(payload["start"]), int(payload["end"]), float(point.score))
            )
        return {chunk_id: [row[1:] for row in sorted(found)] for chunk_id, found in rows.items()}

    def _chunk_ids_of(self, client: Any, document_id: str) -> list[str]:
        """The point ids of a stored document's chunks (kept in its payload, so no scan is needed)."""
        found = client.retrieve(self.documents_name, ids=[point_id(document_id)], with_payload=["chunk_ids"])
        return list(found[0].payload.get("chunk_ids") or []) if found else []

    def _delete(self, client: Any, document_id: str) -> bool:
        from qdrant_client import models

        found = client.retrieve(self.documents_name, ids=[point_id(document_id)], with_payload=["chunk_ids", "source"])
        if not found:
            return False
        chunk_ids = list(found[0].payload.get("chunk_ids") or [])
        if chunk_ids:
            client.delete(self.chunks_name, points_selector=models.PointIdsList(points=chunk_ids), wait=True)
            self._delete_sentences(client, chunk_ids)
        client.delete(
            self.documents_name, points_selector=models.PointIdsList(points=[point_id(document_id)]), wait=True
        )
        source_key = point_id(f"source:{found[0].payload.get('source', '')}")
        mapped = client.retrieve(self.sources_name, ids=[source_key], with_payload=True)
        if mapped and mapped[0].payload.get("document_id") == document_id:
            client.delete(self.sources_name, points_selector=models.PointIdsList(points=[source_key]), wait=True)
        return True

    def delete_document(self, document_id: str, *, also: Callable[[Any], None] | None = None) -> bool:
        existed = self._call(lambda client: self._delete(client, document_id))
        if also is not None:
            also(None)
        return existed

    # -- reads --------------------------------------------------------------------------------------------------

    def _scroll(self, name: str, scroll_filter: Any, with_vectors: Any = False) -> list[Any]:
        """Every point of `name` matching `scroll_filter`, a page at a time."""
        points: list[Any] = []
        offset = None
        while True:
            page, offset = self._call(
                lambda client, offset=offset: client.scroll(
                    name,
                    scroll_filter=scroll_filter,
                    limit=_PAGE,
                    offset=offset,
                    with_payload=True,
                    with_vectors=with_vectors,
                )
            )
            points.extend(page)
            if offset is None:
                return points

    def _documents_by_id(self, document_ids: list[str]) -> dict[str, dict[str, Any]]:
        if not document_ids:
            return {}
        ids = [point_id(item) for item in sorted(set(document_ids))]
        points = self._call(lambda client: client.retrieve(self.documents_name, ids=ids, with_payload=True))
        return {point.payload["document_id"]: point.payload for point in points}

    @staticmethod
    def _chunk(payload: dict[str, Any], vector: Any = None) -> ChunkRecord:
        return ChunkRecord(
            chunk_id=str(payload["chunk_id"]),
            document_id=str(payload["document_id"]),
            chunk_index=int(payload["chunk_index"]),
            text=payload.get("text") or "",
            embedding=np.asarray(vector, dtype=np.float32) if vector is not None else None,
            metadata=dict(payload.get("metadata") or {}),
        )

    def find_by_source(self, source: str) -> DocumentRecord | None:
        def find(client: Any) -> DocumentRecord | None:
            mapped = client.retrieve(self.sources_name, ids=[point_id(f"source:{source}")], with_payload=True)
            if not mapped:
                return None
            found = client.retrieve(self.documents_name, ids=[point_id(mapped[0].payload["document_id"])])
            return document_from_fields(found[0].payload) if found else None

        return self._call(find)

    def get_document(self, document_id: str) -> tuple[DocumentRecord, list[ChunkRecord]] | None:
        payload = self._documents_by_id([document_id]).get(document_id)
        if payload is None:
            return None
        points = self._chunk_points(payload, with_vectors=False)
        chunks = sorted((self._chunk(point.payload) for point in points), key=lambda chunk: chunk.chunk_index)
        return document_from_fields(payload), chunks

    def _chunk_points(self, payload: dict[str, Any], with_vectors: Any) -> list[Any]:
        """A document's chunk points, fetched by the ids its payload keeps (a filter would scan every point)."""
        ids = list(payload.get("chunk_ids") or [])
        if not ids:
            return []
        return self._call(
            lambda client: client.retrieve(self.chunks_name, ids=ids, with_payload=True, with_vectors=with_vectors)
        )

    def list_documents(
        self, limit: int = 20, offset: int = 0, search: str | None = None, filters: SearchFilters | None = None
    ) -> tuple[list[DocumentSummary], int]:
        limit = max(1, int(limit))
        offset = max(0, int(offset))
        payloads = [point.payload for point in self._scroll(self.documents_name, self._filter(filters))]
        payloads = [payload for payload in payloads if matches_search(payload, search)]
        payloads.sort(key=lambda row: (-(row.get("ingested_at") or 0.0), row["document_id"]))
        page = payloads[offset : offset + limit]
        summaries = [
            DocumentSummary(document=document_from_fields(row), chunk_count=int(row["chunk_count"])) for row in page
        ]
        return summaries, len(payloads)

    def count_chunks(self) -> int:
        return int(self._call(lambda client: client.count(self.chunks_name, exact=True).count))

    def count_documents(self) -> int:
        return int(self._call(lambda client: client.count(self.documents_name, exact=True).count))

    def iter_chunks(self, batch_size: int = 1000) -> Iterator[tuple[DocumentRecord, list[ChunkRecord]]]:
        """Every document with its chunks in order, embeddings included."""
        payloads = sorted((point.payload for point in self._scroll(self.documents_name, None)), key=_document_key)
        for payload in payloads:
            points = self._chunk_points(payload, with_vectors=["dense"])
            chunks = sorted(
                (self._chunk(point.payload, (point.vector or {}).get("dense")) for point in points),
                key=lambda chunk: chunk.chunk_index,
            )
            yield document_from_fields(payload), chunks

    # -- searches -----------------------------------------------------------------------------------------------

    def dense_search(self, embedding: np.ndarray, limit: int, filters: SearchFilters | None = None) -> list[ChunkHit]:
        vector = self._query_vector(embedding)
        response = self._call(
            lambda client: client.query_points(
                self.chunks_name,
                query=vector.tolist(),
                using="dense",
                limit=_clamp_limit(limit),
                query_filter=self._filter(filters),
                with_payload=True,
            )
        )
        return self._hits(response.points, ScoreKind.COSINE, None)

    def keyword_search(
        self,
        query: str,
        limit: int,
        filters: SearchFilters | None = None,
        query_embedding: np.ndarray | None = None,
    ) -> list[ChunkHit]:
        from qdrant_client import models

        indices, values = query_sparse_vector(query)
        if not indices:
            return []  # only stop words or punctuation: nothing to match
        vector = self._query_vector(query_embedding) if query_embedding is not None else None
        response = self._call(
            lambda client: client.query_points(
                self.chunks_name,
                query=models.SparseVector(indices=indices, values=values),
                using="sparse",
                limit=_clamp_limit(limit),
                query_filter=self._filter(filters),
                with_payload=True,
                with_vectors=["dense"] if vector is not None else False,
            )
        )
        return self._hits(response.points, ScoreKind.BM25, vector)

    def _query_vector(self, embedding: Any) -> np.ndarray:
        vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.dimension:
            raise ValueError(
                f"The query embedding has {vector.shape[0]} dimensions; the store expects {self.dimension}."
            )
        return vector

    def _hits(self, points: list[Any], kind: ScoreKind, query_vector: np.ndarray | None) -> list[ChunkHit]:
        """Scored points as `ChunkHit`s: the one place Qdrant scores are translated."""
        documents = self._documents_by_id([point.payload["document_id"] for point in points])
        hits: list[ChunkHit] = []
        for point in points:
            row = documents.get(point.payload["document_id"])
            if row is None:
                continue  # its document was deleted between the two reads
            cosine: float | None = float(point.score) if kind is ScoreKind.COSINE else None
            if kind is ScoreKind.BM25 and query_vector is not None:
                stored = (point.vector or {}).get("dense") if isinstance(point.vector, dict) else None
                if stored is not None:
                    cosine = float(np.dot(np.asarray(stored, dtype=np.float32), query_vector))
            hits.append(
                ChunkHit(
                    chunk=self._chunk(point.payload),
                    document=document_from_fields(row),
                    total_chunks=max(1, int(row["chunk_count"])),
                    raw_score=float(point.score),
                    score_kind=kind,
                    cosine=cosine,
                )
            )
        return hits


def _document_key(payload: dict[str, Any]) -> str:
    return str(payload["document_id"])


def _clamp_limit(limit: int) -> int:
    return max(1, min(int(limit), 10_000))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
