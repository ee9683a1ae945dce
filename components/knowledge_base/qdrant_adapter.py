"""What the Qdrant knowledge base does with qdrant-haystack's `QdrantDocumentStore`, through public API only: the
store's public constructor attributes (its configuration), the integration's public converters and filter
translation, and `qdrant_client.QdrantClient` for the calls themselves. Pinned by
`tests/components/knowledge_base/test_integration_contracts.py`.

Why a client of our own instead of the store's: Qdrant's local mode lets one client open a folder, and every
`QdrantDocumentStore` makes its own client on its first call with no public way to hand it one. So the knowledge base
opens the folder's one client itself (`client_params`), and reads and writes the store's collection with it in the
integration's own layout: the collection as the store would create it (`create_collection`), points made by the
integration's `convert_haystack_documents_to_qdrant_points` (so point ids are its `convert_id` and the payload is its
payload, and Haystack's `QdrantEmbeddingRetriever` reads what we write), queries answered as its retrievers answer
them (`query_dense`, `query_sparse`), filters translated by its `convert_filters_to_qdrant`.
"""

from __future__ import annotations

from typing import Any

from haystack import Document
from haystack_integrations.document_stores.qdrant.converters import (
    DENSE_VECTORS_NAME,
    SPARSE_VECTORS_NAME,
    convert_haystack_documents_to_qdrant_points,
    convert_id,
    convert_qdrant_point_to_haystack_document,
)
from haystack_integrations.document_stores.qdrant.filters import convert_filters_to_qdrant
from qdrant_client import QdrantClient, models

# The store's constructor parameters that say how to reach Qdrant (names as in `QdrantDocumentStore.__init__`).
CONNECTION_PARAMETERS = (
    "location",
    "url",
    "port",
    "grpc_port",
    "prefer_grpc",
    "https",
    "prefix",
    "timeout",
    "host",
    "path",
)
# ... and how it creates a collection.
COLLECTION_PARAMETERS = (
    "shard_number",
    "replication_factor",
    "write_consistency_factor",
    "on_disk_payload",
    "hnsw_config",
    "optimizers_config",
    "wal_config",
    "quantization_config",
)


def client_params(store: Any) -> dict[str, Any]:
    """The `QdrantClient` keyword arguments for the Qdrant `store` names: its connection parameters, its API key
    resolved from its `Secret`, its metadata and `client_kwargs` (copied, so the store's own stay as they are)."""
    params: dict[str, Any] = {name: getattr(store, name) for name in CONNECTION_PARAMETERS}
    params["api_key"] = store.api_key.resolve_value() if store.api_key else None
    params["metadata"] = dict(store.metadata or {})
    params["force_disable_check_same_thread"] = store.force_disable_check_same_thread
    for key, value in store.client_kwargs.items():
        params[key] = dict(value) if isinstance(value, dict) else value
    return params


def open_client(store: Any) -> QdrantClient:
    """A new client for the Qdrant `store` names (local mode: it locks the folder; what it raises, this raises)."""
    return QdrantClient(**client_params(store))


def create_collection(client: QdrantClient, store: Any) -> None:
    """Create the store's collection (dropping one of that name first) as `QdrantDocumentStore` creates it: the
    dense vector (named when sparse vectors are used) with the store's size, distance and `on_disk`, the sparse
    vector with Qdrant's IDF modifier when `sparse_idf`, the store's collection parameters and payload indexes."""
    distance = store.get_distance(store.similarity)  # its one sentence for a similarity Qdrant lacks
    dense = models.VectorParams(size=store.embedding_dim, on_disk=store.on_disk, distance=distance)
    vectors: Any = dense
    sparse = None
    if store.use_sparse_embeddings:
        vectors = {DENSE_VECTORS_NAME: dense}
        sparse = {
            SPARSE_VECTORS_NAME: models.SparseVectorParams(
                index=models.SparseIndexParams(on_disk=store.on_disk),
                modifier=models.Modifier.IDF if store.sparse_idf else None,
            )
        }
    if client.collection_exists(store.index):
        client.delete_collection(store.index)
    client.create_collection(
        collection_name=store.index,
        vectors_config=vectors,
        sparse_vectors_config=sparse,
        **{name: getattr(store, name) for name in COLLECTION_PARAMETERS},
    )
    for payload_index in store.payload_fields_to_index or []:
        client.create_payload_index(
            collection_name=store.index,
            field_name=payload_index["field_name"],
            field_schema=payload_index["field_schema"],
        )


def write_documents(client: QdrantClient, store: Any, documents: list[Document]) -> int:
    """Upsert `documents` into the store's collection as the integration's points (its `write_documents` with
    `DuplicatePolicy.OVERWRITE`), in batches of the store's `write_batch_size`."""
    batch = max(1, int(store.write_batch_size))
    for start in range(0, len(documents), batch):
        points = convert_haystack_documents_to_qdrant_points(
            documents[start : start + batch], use_sparse_embeddings=store.use_sparse_embeddings
        )
        client.upsert(collection_name=store.index, points=points, wait=store.wait_result_from_api)
    return len(documents)


def delete_documents(client: QdrantClient, store: Any, document_ids: list[str]) -> None:
    """Delete these documents (by the integration's point ids) from the store's collection."""
    if document_ids:
        client.delete(
            collection_name=store.index,
            points_selector=models.PointIdsList(points=[convert_id(document_id) for document_id in document_ids]),
            wait=store.wait_result_from_api,
        )


def query_dense(
    client: QdrantClient,
    store: Any,
    embedding: list[float],
    filters: dict | None,
    top_k: int,
    return_embedding: bool = False,
) -> list[Document]:
    """The `top_k` documents nearest `embedding` under Haystack `filters`, scored by the collection's distance (what
    `QdrantEmbeddingRetriever` returns with `scale_score=False`)."""
    using = DENSE_VECTORS_NAME if store.use_sparse_embeddings else None
    return _query(client, store, embedding, using, filters, top_k, return_embedding)


def query_sparse(
    client: QdrantClient,
    store: Any,
    indices: list[int],
    values: list[float],
    filters: dict | None,
    top_k: int,
    return_embedding: bool = False,
) -> list[Document]:
    """The `top_k` documents for a sparse query vector under Haystack `filters` (what
    `QdrantSparseEmbeddingRetriever` returns with `scale_score=False`)."""
    query = models.SparseVector(indices=indices, values=values)
    return _query(client, store, query, SPARSE_VECTORS_NAME, filters, top_k, return_embedding)


def _query(
    client: QdrantClient,
    store: Any,
    query: Any,
    using: str | None,
    filters: dict | None,
    top_k: int,
    return_embedding: bool,
) -> list[Document]:
    """One `query_points` call on the store's collection, its points as the integration's documents."""
    points = client.query_points(
        collection_name=store.index,
        query=query,
        using=using,
        query_filter=convert_filters_to_qdrant(filters),
        limit=top_k,
        with_payload=True,
        with_vectors=return_embedding,
    ).points
    return _documents(points, store)


def _documents(points: list[Any], store: Any) -> list[Document]:
    """The integration's documents for these points (their score is the point's)."""
    return [
        convert_qdrant_point_to_haystack_document(point, use_sparse_embeddings=store.use_sparse_embeddings)
        for point in points
    ]
