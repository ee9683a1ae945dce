"""The knowledge base on Milvus: a milvus-lite folder by default (`MILVUS_URI` unset), any Milvus server by URI.

Three collections per knowledge base: `<name>_chunks` (text with Milvus's built-in BM25 function feeding a sparse
field, the dense vector, and the fields every filter needs, repeated from the document), `<name>_documents` (one
row per document with its chunk count and chunk ids) and `<name>_sources` (source -> document id); Milvus requires
a vector field, so the last two carry a 2-d placeholder. Writes find what they replace by primary key: a filter
expression makes milvus-lite scan every row (writes fell from 715 to 393 chunks/s between 1k and 2k chunks).

Why raw pymilvus rather than milvus-haystack's `MilvusDocumentStore` (measured and read, milvus-haystack 0.1.0):
it keeps one collection with dynamic fields, so documents, chunk counts and listing would be rebuilt from chunk
rows on every call; its scores are mapped by the `index_params` given at construction, so a reopened collection
returns raw L2 distances; its BM25 scores come back negative from milvus-lite; `filter_documents` stops silently at
10,000 rows. Here the metric is read from the collection's own index on open, every score is translated in one
place (`_hits`), and listing and copying page through all rows.

Traps handled: milvus-lite reopens collections released (loaded here); its BM25 distances are negative (more
negative is better; kept as their magnitude); squared L2 distances are turned back into cosine; rows sit in an
unindexed buffer that searches slowly until a flush (flushed before the next search once rows were written);
its folder opens in one process only (checked with its own lock before connecting, so the user gets one sentence).
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from haystack import logging

from components.contracts import ScoreKind
from components.knowledge_base.keyword_terms import ENGLISH_STOP_WORDS, terms
from components.knowledge_base.store import (
    ChunkHit,
    ChunkRecord,
    DocumentRecord,
    DocumentSummary,
    KnowledgeBaseMismatch,
    KnowledgeBaseStore,
    KnowledgeBaseUnavailable,
    SearchFilters,
    l2_to_cosine,
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

# Milvus caps limit + offset of one query or search at 16,384.
_WINDOW = 16_384
_VARCHAR = 65_535
_KEY_LENGTH = 1_024
_INSERT_BATCH = 1_000
_DOCUMENT_FIELDS = [
    "document_id",
    "title",
    "source",
    "doc_type",
    "content_hash",
    "url",
    "doc_date",
    "ingested_at",
    "chunk_count",
    "text_in_chunks",
    "metadata",
]
_CHUNK_FIELDS = ["chunk_id", "document_id", "chunk_index", "text", "metadata"]

# milvus-lite folders this process opened, with how many stores use each (the folder is released at zero).
_LITE_LOCK = threading.Lock()
_LITE_USERS: dict[str, int] = {}


def _import_pymilvus() -> None:
    """Import pymilvus with a milvus-lite path in MILVUS_URI hidden: pymilvus parses that variable at import time
    and rejects anything but a server address, while here it is our setting and may name a milvus-lite file."""
    if "pymilvus" in sys.modules:
        return
    saved = os.environ.get("MILVUS_URI")
    if saved is None or "://" in saved:
        import pymilvus  # noqa: F401

        return
    del os.environ["MILVUS_URI"]
    try:
        import pymilvus  # noqa: F401
    finally:
        os.environ["MILVUS_URI"] = saved


def _is_lite(uri: str) -> bool:
    return uri.endswith(".db") and "://" not in uri


def _lite_held_elsewhere(folder: Path) -> bool:
    """Whether another process holds milvus-lite's lock on `folder` (checked with a non-blocking flock)."""
    lock_file = folder / "LOCK"
    if not lock_file.exists():
        return False
    fd = os.open(lock_file, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _literal(value: Any) -> str:
    """A Milvus expression literal (strings and lists of strings quoted and escaped as JSON)."""
    return json.dumps(value, ensure_ascii=False)


def filter_expression(filters: SearchFilters | None) -> str:
    """The Milvus boolean expression for `filters` ("" when there is nothing to restrict)."""
    if filters is None or filters.empty:
        return ""
    parts: list[str] = []
    if filters.doc_types:
        parts.append(f"doc_type in {_literal(list(filters.doc_types))}")
    if filters.date_from:
        parts.append(f"doc_date >= {date_to_ordinal(filters.date_from)}")
    if filters.date_to:
        parts.append(f"(doc_date > 0 and doc_date <= {date_to_ordinal(filters.date_to)})")
    if filters.document_ids:
        parts.append(f"document_id in {_literal(list(filters.document_ids))}")
    return " and ".join(parts)


class MilvusKnowledgeBase(KnowledgeBaseStore):
    """The knowledge base in Milvus (milvus-lite file, Milvus standalone or cluster).

    Usage:
    ```python
    store = MilvusKnowledgeBase("research", get_settings())
    store.upsert_document(document, chunks)  # chunks carry their embeddings
    hits = store.dense_search(query_vector, limit=5, filters=SearchFilters(doc_types=("pdf",)))
    ```
    """

    backend = "milvus"

    def __init__(
        self,
        collection: str,
        settings: Settings | None = None,
        *,
        dimension: int = 384,
        embedding_model: str | None = None,
    ) -> None:
        settings = settings or get_settings()
        self.collection = check_collection_name(collection)
        if dimension < 2:
            raise ValueError("dimension must be at least 2")
        self.dimension = int(dimension)
        self.embedding_model = embedding_model or settings.embedding_model
        self.metric = settings.milvus_metric
        self.uri = settings.milvus_uri or str(settings.data_dir / "milvus" / "knowledge_base.db")
        self._token = settings.milvus_token
        self._timeout = settings.tool_timeout_s
        self.chunks_name = f"{collection}_chunks"
        self.documents_name = f"{collection}_documents"
        self.sources_name = f"{collection}_sources"
        self._lock = threading.RLock()
        self._client: Any = None
        self._lite_key: str | None = None
        self._unflushed = 0
        self._connect()

    # -- connection ---------------------------------------------------------------------------------------------

    def describe(self) -> str:
        """Where the knowledge base lives, for status pages (never the token)."""
        if _is_lite(self.uri):
            return f"milvus-lite in {self.uri}, collection {self.collection}"
        from urllib.parse import urlsplit

        parts = urlsplit(self.uri)
        where = f"{parts.scheme}://{parts.hostname}{':' + str(parts.port) if parts.port else ''}"  # no credentials
        return f"Milvus at {where}, collection {self.collection}"

    def _connect(self) -> Any:
        with self._lock:
            if self._client is not None:
                return self._client
            _import_pymilvus()
            from pymilvus import MilvusClient

            if _is_lite(self.uri):
                folder = Path(self.uri).expanduser().resolve()
                with _LITE_LOCK:
                    opened_here = _LITE_USERS.get(str(folder), 0) > 0
                    if not opened_here:
                        folder.parent.mkdir(parents=True, exist_ok=True)
                        if _lite_held_elsewhere(folder):
                            raise KnowledgeBaseUnavailable(
                                f"The Milvus Lite database {folder} is open in another process (milvus-lite allows "
                                "one process per folder): close that process, set MILVUS_URI to a Milvus server, or "
                                "use KB_BACKEND=pgvector, which several processes can share."
                            )
                    _LITE_USERS[str(folder)] = _LITE_USERS.get(str(folder), 0) + 1
                self._lite_key = str(folder)
                uri = str(folder)
            else:
                uri = self.uri
            kwargs: dict[str, Any] = {"uri": uri, "timeout": self._timeout}
            if self._token is not None:
                kwargs["token"] = self._token.get_secret_value()
            try:
                client = MilvusClient(**kwargs)
                self._ensure_collections(client)
            except KnowledgeBaseUnavailable:
                self._release_lite()
                raise
            except Exception as exc:  # noqa: BLE001 - any failure to open means the backend is unavailable
                self._release_lite()
                raise KnowledgeBaseUnavailable(
                    f"Cannot reach Milvus at {self.uri}: {_first_line(exc)}; check MILVUS_URI and MILVUS_TOKEN, or "
                    "use KB_BACKEND=pgvector."
                ) from exc
            self._client = client
            return client

    def _release_lite(self) -> None:
        key, self._lite_key = self._lite_key, None
        if key is None:
            return
        with _LITE_LOCK:
            users = _LITE_USERS.get(key, 0) - 1
            if users > 0:
                _LITE_USERS[key] = users
                return
            _LITE_USERS.pop(key, None)
        from milvus_lite.server_manager import server_manager_instance

        # The last store of this process lets go of the folder, so another process may open it.
        server_manager_instance.release_server(key)

    def _ensure_collections(self, client: Any) -> None:
        from pymilvus import DataType, Function, FunctionType

        if not client.has_collection(self.chunks_name):
            shape = {"embedding_model": self.embedding_model, "dimension": self.dimension}
            schema = client.create_schema(auto_id=False, enable_dynamic_field=False, description=json.dumps(shape))
            schema.add_field("chunk_id", DataType.VARCHAR, is_primary=True, max_length=_KEY_LENGTH)
            schema.add_field("document_id", DataType.VARCHAR, max_length=_KEY_LENGTH)
            schema.add_field("chunk_index", DataType.INT64)
            schema.add_field("doc_type", DataType.VARCHAR, max_length=64)
            schema.add_field("doc_date", DataType.INT64)
            schema.add_field(
                "text",
                DataType.VARCHAR,
                max_length=_VARCHAR,
                enable_analyzer=True,
                analyzer_params={
                    "tokenizer": "standard",
                    "filter": ["lowercase", {"type": "stop", "stop_words": list(ENGLISH_STOP_WORDS)}],
                },
            )
            schema.add_field("metadata", DataType.JSON)
            schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dimension)
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(
                Function(
                    name=f"{self.collection}_bm25",
                    input_field_names=["text"],
                    output_field_names=["sparse"],
                    function_type=FunctionType.BM25,
                )
            )
            index = client.prepare_index_params()
            index.add_index(field_name="vector", index_type="AUTOINDEX", metric_type=self.metric)
            index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
            self._create(client, self.chunks_name, schema, index)
        if not client.has_collection(self.documents_name):
            schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("document_id", DataType.VARCHAR, is_primary=True, max_length=_KEY_LENGTH)
            for name in ("title", "source", "url"):
                schema.add_field(name, DataType.VARCHAR, max_length=_VARCHAR)
            schema.add_field("doc_type", DataType.VARCHAR, max_length=64)
            schema.add_field("content_hash", DataType.VARCHAR, max_length=256)
            schema.add_field("doc_date", DataType.INT64)
            schema.add_field("ingested_at", DataType.DOUBLE)
            schema.add_field("chunk_count", DataType.INT64)
            schema.add_field("text", DataType.VARCHAR, max_length=_VARCHAR)
            schema.add_field("text_in_chunks", DataType.BOOL)
            schema.add_field("metadata", DataType.JSON)
            schema.add_field("chunk_ids", DataType.JSON)
            schema.add_field("placeholder", DataType.FLOAT_VECTOR, dim=2)
            index = client.prepare_index_params()
            index.add_index(field_name="placeholder", index_type="AUTOINDEX", metric_type="L2")
            self._create(client, self.documents_name, schema, index)
        if not client.has_collection(self.sources_name):
            # source -> document id, so replacing a re-ingested source is a key lookup, not a scan.
            schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("source", DataType.VARCHAR, is_primary=True, max_length=_VARCHAR)
            schema.add_field("document_id", DataType.VARCHAR, max_length=_KEY_LENGTH)
            schema.add_field("placeholder", DataType.FLOAT_VECTOR, dim=2)
            index = client.prepare_index_params()
            index.add_index(field_name="placeholder", index_type="AUTOINDEX", metric_type="L2")
            self._create(client, self.sources_name, schema, index)
        for name in (self.chunks_name, self.documents_name, self.sources_name):
            # milvus-lite reopens collections released; a search on them fails until they are loaded.
            client.load_collection(name)
        self._read_collection_shape(client)

    @staticmethod
    def _create(client: Any, name: str, schema: Any, index: Any) -> None:
        client.create_collection(name, schema=schema)
        # Not waiting for the index build: pymilvus polls it with an RPC milvus-lite lacks (and sleeps 0.5 s a field).
        client.create_index(name, index, sync=False)

    def _read_collection_shape(self, client: Any) -> None:
        """Take the metric and dimension from the collection itself, so a reopened collection scores correctly."""
        description = client.describe_collection(self.chunks_name)
        dim = self.dimension
        for field in description.get("fields", []):
            if field.get("name") == "vector":
                dim = int(field.get("params", {}).get("dim", self.dimension))
        try:
            stored_model = json.loads(description.get("description") or "{}").get("embedding_model")
        except (ValueError, AttributeError):
            stored_model = None
        if dim != self.dimension or (stored_model and stored_model != self.embedding_model):
            raise KnowledgeBaseMismatch(
                f"Milvus collection {self.collection!r} holds {dim}-dimensional embeddings from "
                f"{stored_model or 'an unknown model'}, but this knowledge base is set up for {self.dimension} "
                f"dimensions from {self.embedding_model}; use another collection or re-ingest into a new one."
            )
        index = client.describe_index(self.chunks_name, "vector")
        metric = str(index.get("metric_type") or self.metric).upper()
        if metric != self.metric:
            logger.warning(
                "Milvus collection {collection} was built with metric {built}, not {wanted}; using {built}",
                collection=self.chunks_name,
                built=metric,
                wanted=self.metric,
            )
        self.metric = metric

    def close(self) -> None:
        """Flush pending rows and release the client (and the milvus-lite folder when no other store uses it)."""
        with self._lock:
            if self._client is None:
                return
            try:
                self._flush()
                self._client.close()
            finally:
                self._client = None
                self._release_lite()

    # -- writes -------------------------------------------------------------------------------------------------

    def upsert_document(
        self,
        document: DocumentRecord,
        chunks: list[ChunkRecord],
        *,
        also: Callable[[Any], None] | None = None,
    ) -> None:
        rows = [self._chunk_row(document, chunk) for chunk in chunks]
        client = self._connect()
        document_row = document_fields(document, len(chunks))
        document_row["placeholder"] = [1.0, 0.0]
        keep = [row["chunk_id"] for row in rows]
        document_row["chunk_ids"] = keep
        old_ids = self._chunk_ids_of(client, document.document_id)
        # New chunks go in before stale ones leave, so a reader never sees the document without chunks.
        for start in range(0, len(rows), _INSERT_BATCH):
            client.upsert(self.chunks_name, rows[start : start + _INSERT_BATCH])
        stale = sorted(set(old_ids) - set(keep))
        if stale:
            # By primary key: a filter expression makes milvus-lite scan every row.
            client.delete(self.chunks_name, ids=stale)
        # As in every backend, a new document replaces an older one ingested from the same source.
        previous = client.get(self.sources_name, ids=[document.source], output_fields=["document_id"])
        if previous and previous[0]["document_id"] != document.document_id:
            self._delete(client, previous[0]["document_id"])
        client.upsert(self.documents_name, [document_row])
        client.upsert(
            self.sources_name,
            [{"source": document.source, "document_id": document.document_id, "placeholder": [1.0, 0.0]}],
        )
        with self._lock:
            self._unflushed += len(rows) + 1
        if also is not None:
            also(None)

    def _chunk_row(self, document: DocumentRecord, chunk: ChunkRecord) -> dict[str, Any]:
        if chunk.embedding is None:
            raise ValueError(f"Chunk {chunk.chunk_id} has no embedding; embed chunks before writing them.")
        vector = np.asarray(chunk.embedding, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.dimension:
            raise ValueError(
                f"Chunk {chunk.chunk_id} has {vector.shape[0]} dimensions; the store expects {self.dimension}."
            )
        if len(chunk.text.encode("utf-8")) > _VARCHAR:
            raise ValueError(f"Chunk {chunk.chunk_id} is longer than Milvus's 65,535-byte text limit; split it.")
        if chunk.document_id != document.document_id:
            raise ValueError(f"Chunk {chunk.chunk_id} belongs to {chunk.document_id}, not {document.document_id}.")
        return {
            "chunk_id": chunk.chunk_id,
            "document_id": document.document_id,
            "chunk_index": int(chunk.chunk_index),
            "doc_type": document.doc_type or "",
            "doc_date": date_to_ordinal(document.date),
            "text": chunk.text,
            "metadata": json_safe(chunk.metadata),
            "vector": vector.tolist(),
        }

    def _chunk_ids_of(self, client: Any, document_id: str) -> list[str]:
        """The ids of a stored document's chunks (kept in its row, so no scan is needed)."""
        found = client.get(self.documents_name, ids=[document_id], output_fields=["chunk_ids"])
        return list(found[0].get("chunk_ids") or []) if found else []

    def _delete(self, client: Any, document_id: str) -> bool:
        found = client.get(self.documents_name, ids=[document_id], output_fields=["chunk_ids", "source"])
        if not found:
            return False
        chunk_ids = list(found[0].get("chunk_ids") or [])
        if chunk_ids:
            client.delete(self.chunks_name, ids=chunk_ids)
        client.delete(self.documents_name, ids=[document_id])
        source = found[0].get("source")
        if source is not None:
            mapped = client.get(self.sources_name, ids=[source], output_fields=["document_id"])
            if mapped and mapped[0]["document_id"] == document_id:
                client.delete(self.sources_name, ids=[source])
        with self._lock:
            self._unflushed += 1
        return True

    def delete_document(self, document_id: str, *, also: Callable[[Any], None] | None = None) -> bool:
        existed = self._delete(self._connect(), document_id)
        if also is not None:
            also(None)
        return existed

    def _flush(self) -> None:
        with self._lock:
            if not self._unflushed or self._client is None:
                return
            started = time.monotonic()
            self._client.flush(self.chunks_name)
            self._client.flush(self.documents_name)
            self._client.flush(self.sources_name)
            logger.debug(
                "Flushed {rows} Milvus rows in {ms} ms",
                rows=self._unflushed,
                ms=round((time.monotonic() - started) * 1000),
            )
            self._unflushed = 0

    def drop(self) -> None:
        """Delete the collection's chunks and documents (tests and `research kb copy --replace`)."""
        client = self._connect()
        for name in (self.chunks_name, self.documents_name, self.sources_name):
            client.drop_collection(name)
        with self._lock:
            self._unflushed = 0
        self._ensure_collections(client)

    def flush(self, wait_s: float = 120.0) -> None:
        """Seal written rows into segments and wait (up to `wait_s`) until their indexes are built.

        Searches of unflushed rows, and of sealed rows whose index is still being built, are slow: measured at 10k
        chunks, 170-600 ms right after a flush against 7 ms once milvus-lite had finished indexing.
        """
        client = self._connect()
        self._flush()
        deadline = time.monotonic() + wait_s
        for field in ("vector", "sparse"):
            while time.monotonic() < deadline:
                try:
                    state = client.describe_index(self.chunks_name, field)
                except Exception:  # noqa: BLE001 - servers that do not report progress: nothing to wait for
                    break
                if not state.get("pending_index_rows") and state.get("state", "Finished") == "Finished":
                    break
                time.sleep(0.2)

    # -- reads --------------------------------------------------------------------------------------------------

    def _documents(self, expr: str, fields: list[str] | None = None) -> list[dict[str, Any]]:
        """Every document row matching `expr`, paging past Milvus's 16,384-row window."""
        client = self._connect()
        fields = fields or _DOCUMENT_FIELDS
        total = self._count(self.documents_name, expr)
        if total <= _WINDOW:
            return list(client.query(self.documents_name, filter=expr, output_fields=fields, limit=_WINDOW))
        rows: list[dict[str, Any]] = []
        iterator = client.query_iterator(self.documents_name, batch_size=1000, filter=expr, output_fields=fields)
        try:
            while batch := iterator.next():
                rows.extend(batch)
        finally:
            iterator.close()
        return rows

    def _documents_by_id(self, document_ids: list[str]) -> dict[str, dict[str, Any]]:
        if not document_ids:
            return {}
        rows = self._connect().query(
            self.documents_name,
            filter=f"document_id in {_literal(sorted(set(document_ids)))}",
            output_fields=[*_DOCUMENT_FIELDS, "text"],
            limit=min(_WINDOW, len(set(document_ids))),
        )
        return {row["document_id"]: row for row in rows}

    def _chunks_of(self, document_ids: list[str], with_vectors: bool) -> list[dict[str, Any]]:
        fields = [*_CHUNK_FIELDS, "vector"] if with_vectors else list(_CHUNK_FIELDS)
        expr = f"document_id in {_literal(document_ids)}"
        client = self._connect()
        rows: list[dict[str, Any]] = []
        offset = 0
        while True:
            batch = client.query(
                self.chunks_name, filter=expr, output_fields=fields, limit=_WINDOW - offset, offset=offset
            )
            rows.extend(batch)
            offset += len(batch)
            if not batch or offset >= _WINDOW:
                return rows

    def _count(self, name: str, expr: str = "") -> int:
        result = self._connect().query(name, filter=expr, output_fields=["count(*)"])
        return int(result[0]["count(*)"]) if result else 0

    def _document(self, row: dict[str, Any], chunks: list[ChunkRecord] | None = None) -> DocumentRecord:
        record = document_from_fields(row)
        if row.get("text_in_chunks") and chunks is not None:
            record.text = "\n".join(chunk.text for chunk in chunks)
        return record

    @staticmethod
    def _chunk(row: dict[str, Any], with_vector: bool = False) -> ChunkRecord:
        return ChunkRecord(
            chunk_id=str(row["chunk_id"]),
            document_id=str(row["document_id"]),
            chunk_index=int(row["chunk_index"]),
            text=row.get("text") or "",
            embedding=np.asarray(row["vector"], dtype=np.float32) if with_vector and "vector" in row else None,
            metadata=dict(row.get("metadata") or {}),
        )

    def find_by_source(self, source: str) -> DocumentRecord | None:
        client = self._connect()
        mapped = client.get(self.sources_name, ids=[source], output_fields=["document_id"])
        if not mapped:
            return None
        rows = client.get(
            self.documents_name, ids=[mapped[0]["document_id"]], output_fields=[*_DOCUMENT_FIELDS, "text"]
        )
        return self._document(rows[0]) if rows else None

    def get_document(self, document_id: str) -> tuple[DocumentRecord, list[ChunkRecord]] | None:
        rows = self._documents_by_id([document_id])
        row = rows.get(document_id)
        if row is None:
            return None
        chunks = sorted((self._chunk(item) for item in self._chunks_of([document_id], False)), key=_by_index)
        return self._document(row, chunks), chunks

    def list_documents(
        self, limit: int = 20, offset: int = 0, search: str | None = None, filters: SearchFilters | None = None
    ) -> tuple[list[DocumentSummary], int]:
        limit = max(1, int(limit))
        offset = max(0, int(offset))
        rows = [row for row in self._documents(filter_expression(filters)) if matches_search(row, search)]
        rows.sort(key=lambda row: (-(row.get("ingested_at") or 0.0), row["document_id"]))
        page = rows[offset : offset + limit]
        return [
            DocumentSummary(document=self._document(row), chunk_count=int(row["chunk_count"])) for row in page
        ], len(rows)

    def count_chunks(self) -> int:
        return self._count(self.chunks_name)

    def count_documents(self) -> int:
        return self._count(self.documents_name)

    def iter_chunks(self, batch_size: int = 1000) -> Iterator[tuple[DocumentRecord, list[ChunkRecord]]]:
        """Every document with its chunks in order, embeddings included, a few documents per query."""
        batch_size = max(1, min(int(batch_size), _WINDOW))
        documents = sorted(self._documents("", fields=[*_DOCUMENT_FIELDS, "text"]), key=lambda row: row["document_id"])
        group: list[dict[str, Any]] = []
        size = 0
        for row in [*documents, None]:
            if row is not None and (not group or size + int(row["chunk_count"]) <= batch_size):
                group.append(row)
                size += int(row["chunk_count"])
                continue
            if group:
                by_document: dict[str, list[ChunkRecord]] = {item["document_id"]: [] for item in group}
                for item in self._chunks_of(list(by_document), True):
                    by_document[item["document_id"]].append(self._chunk(item, with_vector=True))
                for item in group:
                    chunks = sorted(by_document[item["document_id"]], key=_by_index)
                    yield self._document(item, chunks), chunks
            group, size = ([row], int(row["chunk_count"])) if row is not None else ([], 0)

    # -- searches -----------------------------------------------------------------------------------------------

    def dense_search(self, embedding: np.ndarray, limit: int, filters: SearchFilters | None = None) -> list[ChunkHit]:
        vector = self._query_vector(embedding)
        client = self._connect()
        self._flush()
        results = client.search(
            self.chunks_name,
            data=[vector.tolist()],
            anns_field="vector",
            limit=_clamp_limit(limit),
            filter=filter_expression(filters),
            output_fields=list(_CHUNK_FIELDS),
            search_params={"metric_type": self.metric},
        )
        kind = ScoreKind.L2 if self.metric == "L2" else ScoreKind.COSINE
        return self._hits(results[0] if results else [], kind, None)

    def keyword_search(
        self,
        query: str,
        limit: int,
        filters: SearchFilters | None = None,
        query_embedding: np.ndarray | None = None,
    ) -> list[ChunkHit]:
        if not terms(query):
            return []  # only stop words or punctuation: nothing to match
        vector = self._query_vector(query_embedding) if query_embedding is not None else None
        client = self._connect()
        self._flush()
        fields = [*_CHUNK_FIELDS, "vector"] if vector is not None else list(_CHUNK_FIELDS)
        results = client.search(
            self.chunks_name,
            data=[query],
            anns_field="sparse",
            limit=_clamp_limit(limit),
            filter=filter_expression(filters),
            output_fields=fields,
            search_params={"metric_type": "BM25"},
        )
        return self._hits(results[0] if results else [], ScoreKind.BM25, vector)

    def _query_vector(self, embedding: Any) -> np.ndarray:
        vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.dimension:
            raise ValueError(
                f"The query embedding has {vector.shape[0]} dimensions; the store expects {self.dimension}."
            )
        return vector

    def _hits(self, results: Any, kind: ScoreKind, query_vector: np.ndarray | None) -> list[ChunkHit]:
        """Search results as `ChunkHit`s: the one place Milvus scores are translated."""
        items = []
        for item in results:
            entity = dict(item.get("entity") or {})
            entity.setdefault("chunk_id", item.get("id"))
            items.append((entity, float(item.get("distance", 0.0))))
        documents = self._documents_by_id([entity["document_id"] for entity, _ in items])
        hits: list[ChunkHit] = []
        for entity, distance in items:
            row = documents.get(entity["document_id"])
            if row is None:
                continue  # its document was deleted between the two reads
            cosine: float | None
            if kind is ScoreKind.L2:
                cosine = l2_to_cosine(math.sqrt(max(distance, 0.0)))  # Milvus returns squared L2
                raw = distance
            elif kind is ScoreKind.COSINE:
                cosine = raw = distance
            else:
                raw = abs(distance)  # milvus-lite returns BM25 negated; servers return it positive
                cosine = None
                if query_vector is not None and entity.get("vector") is not None:
                    cosine = float(np.dot(np.asarray(entity["vector"], dtype=np.float32), query_vector))
            hits.append(
                ChunkHit(
                    chunk=self._chunk(entity),
                    document=self._document(row),
                    total_chunks=max(1, int(row["chunk_count"])),
                    raw_score=float(raw),
                    score_kind=kind,
                    cosine=None if cosine is None else float(cosine),
                )
            )
        return hits


def _by_index(chunk: ChunkRecord) -> int:
    return chunk.chunk_index


def _clamp_limit(limit: int) -> int:
    return max(1, min(int(limit), _WINDOW))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
