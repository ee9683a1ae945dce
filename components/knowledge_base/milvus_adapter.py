"""What the Milvus knowledge base does with milvus-haystack's `MilvusDocumentStore`, through public API only: the
store's public serialisation (`to_dict`: its field names and configuration) and public attributes, the integration's
built-in functions (`BM25BuiltInFunction.function`, `get_input_field_schema_kwargs`), and pymilvus's `MilvusClient`
for every call. Pinned by `tests/components/knowledge_base/test_integration_contracts.py`.

Why the client and not the store's methods: a milvus-lite file opens in one process, and two store objects of one
file (what YAML deserialisation makes) each keep their own idea of whether the collection exists, which only their
private members could correct. So the knowledge base shares one client per file and reads and writes the store's
collection with it, in the integration's own layout: the collection as its first write creates it
(`create_collection`), rows as its `write_documents` builds them (`upsert_documents`), its placeholder vector for a
document written without one (`PLACEHOLDER_VALUE`). Whether this process already holds a milvus-lite folder is read
from the operating system's lock table (`held_by_this_process`), and a written collection's indexes are made
searchable by releasing and loading it (`seal`), both instead of milvus-lite's private bookkeeping.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haystack import Document

# The value milvus-haystack fills the vector of a document written without an embedding with.
PLACEHOLDER_VALUE = 999.0
# The default vector index of the integration's first write (when the store has no `index_params`).
DEFAULT_INDEX = {"metric_type": "L2", "index_type": "AUTOINDEX", "params": {}}
_VARCHAR = 65_535


@dataclass(frozen=True)
class MilvusLayout:
    """The field names of a store's collection, from its public serialisation."""

    primary: str
    text: str
    vector: str
    sparse: str | None
    partition_key: str | None = None

    @classmethod
    def of(cls, store: Any) -> MilvusLayout:
        parameters = store.to_dict()["init_parameters"]
        return cls(
            primary=parameters["primary_field"],
            text=parameters["text_field"],
            vector=parameters["vector_field"],
            sparse=parameters.get("sparse_vector_field"),
            partition_key=parameters.get("partition_key_field"),
        )


def vector_index(client: Any, collection: str, field: str) -> dict[str, Any] | None:
    """The description of the index on `field` (None when it has none)."""
    names = client.list_indexes(collection, field_name=field)
    return client.describe_index(collection, names[0]) if names else None


def count(client: Any, collection: str) -> int:
    """The rows of `collection` (what the store's `count_documents` asks)."""
    return int(client.query(collection, filter="", output_fields=["count(*)"])[0]["count(*)"])


def create_collection(client: Any, store: Any, layout: MilvusLayout, dimension: int) -> None:
    """Create the store's collection as its first write would (its schema, its built-in functions, its consistency
    level and properties) and its vector and sparse indexes, without pymilvus's wait for the build (it polls an RPC
    milvus-lite lacks, logs two tracebacks and loses about a second)."""
    from pymilvus import DataType

    if not store.enable_dynamic_field:
        raise ValueError(
            f"Milvus collection {store.collection_name!r} would need a field per meta key; give the store "
            "enable_dynamic_field=True."
        )
    functions = list(store.builtin_function or [])
    schema = client.create_schema(
        auto_id=False,
        description=store.collection_description,
        partition_key_field=layout.partition_key,
        enable_dynamic_field=True,
        functions=[function.function for function in functions],
    )
    text_options: dict[str, Any] = {}
    for function in functions:
        if layout.text in (getattr(function, "input_field_names", None) or []):
            text_options.update(function.get_input_field_schema_kwargs())
    schema.add_field(field_name=layout.text, datatype=DataType.VARCHAR, max_length=_VARCHAR, **text_options)
    schema.add_field(field_name=layout.primary, datatype=DataType.VARCHAR, is_primary=True, max_length=_VARCHAR)
    schema.add_field(field_name=layout.vector, datatype=DataType.FLOAT_VECTOR, dim=dimension)
    if layout.sparse:
        schema.add_field(field_name=layout.sparse, datatype=DataType.SPARSE_FLOAT_VECTOR)
    client.create_collection(
        collection_name=store.collection_name, schema=schema, consistency_level=store.consistency_level
    )
    if store.collection_properties is not None:
        client.alter_collection_properties(store.collection_name, store.collection_properties)
    indexes = client.prepare_index_params()
    indexes.add_index(field_name=layout.vector, **(store.index_params or DEFAULT_INDEX))
    if layout.sparse:
        sparse = store.sparse_index_params or {
            "index_type": "SPARSE_INVERTED_INDEX",
            "metric_type": "BM25" if functions else "IP",
            "params": {},
        }
        indexes.add_index(field_name=layout.sparse, **sparse)
    client.create_index(store.collection_name, indexes, sync=False)


def upsert_documents(client: Any, store: Any, layout: MilvusLayout, documents: list[Document], batch: int) -> int:
    """Upsert `documents` as the rows the store's `write_documents(..., policy=OVERWRITE)` writes: text, vector (the
    placeholder when a document has none), primary key, and the meta in the dynamic field."""
    dimension = next((len(doc.embedding) for doc in documents if doc.embedding is not None), 128)
    rows = [
        {
            **(doc.meta or {}),
            layout.text: doc.content or "",
            layout.vector: list(doc.embedding) if doc.embedding is not None else [PLACEHOLDER_VALUE] * dimension,
            layout.primary: doc.id,
        }
        for doc in documents
    ]
    for start in range(0, len(rows), max(1, batch)):
        client.upsert(store.collection_name, rows[start : start + batch])
    return len(rows)


def is_placeholder(embedding: list[float]) -> bool:
    """Whether a stored vector is the integration's placeholder for a document written without one."""
    return len(embedding) > 0 and all(value == PLACEHOLDER_VALUE for value in embedding[:4])


def seal(client: Any, names: list[str]) -> None:
    """Flush these collections and make every flushed segment searchable through its index: release, flush, load.
    milvus-lite builds a segment's index in a background thread after a flush (searching it by brute force
    meanwhile) but builds the missing ones before `load_collection` returns; a server loads what it has indexed."""
    for name in names:
        client.release_collection(name)
        client.flush(name)
        client.load_collection(name)


def held_by_this_process(folder: Path) -> bool:
    """Whether this process holds the flock on a milvus-lite folder's LOCK file, by the kernel's lock table
    (`/proc/locks`: the holder's pid and the file's device and inode). False where there is no such table."""
    lock_file = folder / "LOCK"
    try:
        status = os.stat(lock_file)
        with open("/proc/locks", encoding="ascii") as table:
            lines = table.read().splitlines()
    except OSError:
        return False
    where = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    for line in lines:
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; a waiting request has "->" after its number
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == where and parts[4] == str(os.getpid()):
            return True
    return False
