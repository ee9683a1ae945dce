"""The contracts the knowledge base's adapters (`pgvector_adapter`, `milvus_adapter`, `qdrant_adapter`) rely on, at the
integration versions `constraints.txt` pins: the public constructor parameters, attributes, methods and converters
they use, with the expected signatures, and round trips in which the integration itself reads what an adapter wrote
(and makes what an adapter makes). An integration release that renames or changes one of them fails a test named
after it here, not the first command of a fresh install."""

from __future__ import annotations

import inspect
import os
import re
from contextlib import closing
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from haystack import Document
from haystack.utils import Secret
from haystack.utils.auth import EnvVarSecret

ROOT = Path(__file__).resolve().parents[3]
# The distributions whose API the adapters use, as named in constraints.txt.
ADAPTED = (
    "haystack-ai",
    "pgvector-haystack",
    "psycopg",
    "milvus-haystack",
    "pymilvus",
    "milvus-lite",
    "qdrant-haystack",
    "qdrant-client",
)
DIM = 8


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        found = re.match(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s;#]+)", line.strip())
        if found:
            pins[re.sub(r"\[.*\]", "", found.group(1)).lower()] = found.group(2)
    return pins


def _assert_pinned(distribution: str) -> None:
    """The installed `distribution` is the version `constraints.txt` pins (the one the contract tests were run at)."""
    pins = _pins()
    assert distribution in pins, f"constraints.txt pins no version of {distribution}"
    assert metadata.version(distribution) == pins[distribution], (
        f"{distribution} {metadata.version(distribution)} is installed but constraints.txt pins {pins[distribution]}: "
        "run the contract tests at the new version, then refresh the lock"
    )


def _parameters(function: Any) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(function).parameters)


def _accepts(function: Any, *names: str) -> None:
    parameters = _parameters(function)
    takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    missing = [name for name in names if name not in parameters and not takes_kwargs]
    assert not missing, f"{function.__qualname__} no longer takes {missing}"


def _unit(seed: int) -> list[float]:
    vector = np.random.default_rng(seed).normal(size=DIM)
    return (vector / np.linalg.norm(vector)).tolist()


def _documents() -> list[Document]:
    return [
        Document(id=f"note-{i}", content=text, embedding=_unit(i), meta={"file_path": f"n{i}.txt", "page": i})
        for i, text in enumerate(["ferns grow in shade", "the quarry flooded in spring", "a kiln fires clay"])
    ]


# -- the pinned versions ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("distribution", ADAPTED)
def test_the_installed_integration_is_the_version_the_contracts_were_checked_at(distribution: str) -> None:
    _assert_pinned(distribution)


# -- Haystack's secrets (pgvector_adapter.env_var_names, EmbeddedDatabaseSecret) -----------------------------------


def test_an_env_var_secret_serialises_its_variables_and_strictness() -> None:
    from components.knowledge_base.pgvector_adapter import env_var_names

    secret = Secret.from_env_var(["FIRST_URL", "SECOND_URL"], strict=False)
    assert secret.to_dict() == {"type": "env_var", "env_vars": ["FIRST_URL", "SECOND_URL"], "strict": False}
    assert env_var_names(secret) == (("FIRST_URL", "SECOND_URL"), False)
    with pytest.raises(ValueError, match="environment-variable secret"):
        env_var_names(Secret.from_token("not-a-variable"))


def test_the_embedded_database_secret_serialises_as_the_env_var_secret_it_replaces() -> None:
    from components.knowledge_base.pgvector_index import EmbeddedDatabaseSecret

    # EmbeddedDatabaseSecret extends Haystack's EnvVarSecret dataclass by its constructor fields.
    assert [field.name for field in EnvVarSecret.__dataclass_fields__.values()][:2] == ["_env_vars", "_strict"]
    secret = EmbeddedDatabaseSecret(_env_vars=("FIRST_URL",), _strict=False, _fallback="postgresql://127.0.0.1/x")
    assert secret.to_dict() == Secret.from_env_var("FIRST_URL", strict=False).to_dict()


# -- pgvector-haystack (pgvector_adapter.adopt_existing_table) -----------------------------------------------------


def test_the_pgvector_store_takes_the_index_and_table_options_the_adapter_sets() -> None:
    from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore

    names = ("keyword_index_name", "hnsw_index_name", "search_strategy", "recreate_table")
    _accepts(PgvectorDocumentStore.__init__, *names, "hnsw_recreate_index_if_exists", "schema_name", "table_name")
    store = PgvectorDocumentStore(connection_string=Secret.from_env_var("UNSET_CONTRACT_URL", strict=False))
    for name in (*names, "hnsw_recreate_index_if_exists", "schema_name", "table_name", "connection_string"):
        assert hasattr(store, name), f"PgvectorDocumentStore has no public attribute {name}"
    assert {"keyword_index_name", "hnsw_index_name", "recreate_table"} <= set(store.to_dict()["init_parameters"])


@pytest.mark.integration
def test_an_adopted_pgvector_table_is_written_through_the_integration_without_a_schema_change(
    database_url: str, collection_name: str
) -> None:
    import psycopg
    from haystack.document_stores.types import DuplicatePolicy
    from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore

    from components.knowledge_base.pgvector_adapter import adopt_existing_table

    def store(**options: Any) -> PgvectorDocumentStore:
        return PgvectorDocumentStore(
            connection_string=Secret.from_env_var("CONTRACT_DATABASE_URL"),
            table_name=collection_name,
            embedding_dimension=DIM,
            **options,
        )

    def indexes(conn: Any) -> list[tuple[str, str]]:
        query = "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s ORDER BY indexname"
        return conn.execute(query, (collection_name,)).fetchall()

    os.environ["CONTRACT_DATABASE_URL"] = database_url
    try:
        owner = store(keyword_index_name=f"{collection_name}_own_kw")
        owner.write_documents(_documents()[:1])
        owner.close()
        with psycopg.connect(database_url, autocommit=True) as conn:
            before = indexes(conn)
            # Another configuration of the same table: its own names would add a second keyword index, an HNSW one,
            # and drop the table.
            other = store(
                keyword_index_name=f"{collection_name}_other_kw",
                search_strategy="hnsw",
                hnsw_index_name=f"{collection_name}_other_hnsw",
                recreate_table=True,
            )
            adopt_existing_table(other, conn)
            assert other.write_documents(_documents()[1:], policy=DuplicatePolicy.OVERWRITE) == 2
            assert other.count_documents() == 3
            assert indexes(conn) == before
            other.close()
            conn.execute(f'DROP TABLE "{collection_name}"')
    finally:
        os.environ.pop("CONTRACT_DATABASE_URL", None)


# -- milvus-haystack and pymilvus (milvus_adapter) ------------------------------------------------------------------


def test_the_milvus_store_serialises_its_field_names_and_keeps_its_configuration_public(tmp_path: Path) -> None:
    from milvus_haystack import MilvusDocumentStore
    from milvus_haystack.function import BM25BuiltInFunction

    from components.knowledge_base.milvus_adapter import MilvusLayout

    fields = ("primary_field", "text_field", "vector_field", "sparse_vector_field", "partition_key_field")
    _accepts(MilvusDocumentStore.__init__, *fields, "builtin_function", "index_params", "sparse_index_params")
    store = MilvusDocumentStore(
        collection_name="contract",
        connection_args={"uri": str(tmp_path / "contract.db")},
        primary_field="pk",
        text_field="body",
        vector_field="dense",
        sparse_vector_field="bm25",
        builtin_function=[BM25BuiltInFunction(input_field_names="body", output_field_names="bm25")],
    )
    assert MilvusLayout.of(store) == MilvusLayout(primary="pk", text="body", vector="dense", sparse="bm25")
    public = (
        "client",
        "collection_name",
        "collection_description",
        "collection_properties",
        "connection_args",
        "consistency_level",
        "index_params",
        "search_params",
        "sparse_index_params",
        "builtin_function",
        "enable_dynamic_field",
    )
    for name in public:
        assert hasattr(store, name), f"MilvusDocumentStore has no public attribute {name}"
    function = store.builtin_function[0]
    assert function.input_field_names == ["body"] and function.output_field_names == ["bm25"]
    assert function.function.name and function.get_input_field_schema_kwargs().get("enable_analyzer") is True


def test_the_milvus_client_takes_the_calls_the_adapter_makes() -> None:
    from milvus_lite.server_manager import server_manager_instance
    from pymilvus import MilvusClient

    from components.knowledge_base.milvus_index import _import_pymilvus  # noqa: F401 - MILVUS_URI-safe import

    calls = {
        "search": ("collection_name", "data", "anns_field", "limit", "filter", "output_fields", "search_params"),
        "get": ("collection_name", "ids", "output_fields"),
        "query": ("collection_name", "filter", "output_fields"),
        "query_iterator": ("collection_name", "batch_size", "filter", "output_fields"),
        "upsert": ("collection_name", "data"),
        "delete": ("collection_name", "ids"),
        "create_collection": ("collection_name", "schema", "consistency_level"),
        "create_schema": (),
        "create_index": ("collection_name", "index_params", "sync"),
        "list_indexes": ("collection_name", "field_name"),
        "describe_index": ("collection_name", "index_name"),
        "describe_collection": ("collection_name",),
        "alter_collection_properties": ("collection_name", "properties"),
        "release_collection": ("collection_name",),
        "load_collection": ("collection_name",),
        "flush": ("collection_name",),
        "has_collection": ("collection_name",),
        "drop_collection": ("collection_name",),
        "list_collections": (),
        "prepare_index_params": (),
    }
    for name, parameters in calls.items():
        _accepts(getattr(MilvusClient, name), *parameters)
    _accepts(server_manager_instance.release_server, "path")


@pytest.mark.integration
def test_milvus_collections_made_by_the_adapter_and_by_the_integration_are_alike_and_read_alike(tmp_path: Path) -> None:
    from milvus_haystack import MilvusDocumentStore

    from components.knowledge_base import milvus_adapter
    from components.knowledge_base.milvus_index import open_milvus_document_store

    uri = str(tmp_path / "contract.db")
    ours = open_milvus_document_store("ours", uri=uri)
    theirs = open_milvus_document_store("theirs", uri=uri)
    client = ours.client
    layout = milvus_adapter.MilvusLayout.of(ours)
    milvus_adapter.create_collection(client, ours, layout, DIM)
    client.load_collection("ours")
    documents = _documents()
    assert milvus_adapter.upsert_documents(client, ours, layout, documents, batch=2) == 3
    theirs.write_documents(documents)
    client.flush("ours")

    def shape(name: str) -> Any:
        described = client.describe_collection(name)
        functions = [{k: v for k, v in f.items() if k not in ("name", "id")} for f in described["functions"]]
        fields = [{k: v for k, v in f.items() if k != "field_id"} for f in described["fields"]]
        described_indexes = {
            field: milvus_adapter.vector_index(client, name, field) or {} for field in ("vector", "sparse")
        }
        indexes = {
            field: {k: v for k, v in found.items() if "rows" not in k} for field, found in described_indexes.items()
        }
        return fields, functions, described["enable_dynamic_field"], indexes

    assert shape("ours") == shape("theirs")

    # The integration reads the adapter's rows as it reads its own (its meta carries the BM25 output either way).
    def read(name: str) -> dict[str, Any]:
        reader = MilvusDocumentStore(collection_name=name, connection_args={"uri": uri})
        return {doc.id: doc for doc in reader.filter_documents()}

    read_ours, read_theirs = read("ours"), read("theirs")
    assert set(read_ours) == {doc.id for doc in documents} and milvus_adapter.count(client, "ours") == 3
    for doc in documents:
        ours_doc, theirs_doc = read_ours[doc.id], read_theirs[doc.id]
        assert ours_doc.content == theirs_doc.content == doc.content and ours_doc.meta == theirs_doc.meta
        assert {key: ours_doc.meta[key] for key in doc.meta} == doc.meta
        assert np.allclose(ours_doc.embedding, doc.embedding, atol=1e-6)


@pytest.mark.integration
def test_the_integration_writes_its_placeholder_vector_for_a_document_without_one(tmp_path: Path) -> None:
    from components.knowledge_base import milvus_adapter
    from components.knowledge_base.milvus_index import open_milvus_document_store

    store = open_milvus_document_store("placeholder", uri=str(tmp_path / "contract.db"))
    store.write_documents([*_documents()[:1], Document(id="bare", content="no vector here")])
    row = store.client.get("placeholder", ids=["bare"], output_fields=["vector"])[0]
    assert milvus_adapter.is_placeholder(list(row["vector"]))
    assert row["vector"][0] == milvus_adapter.PLACEHOLDER_VALUE
    kept = store.client.get("placeholder", ids=["note-0"], output_fields=["vector"])[0]
    assert not milvus_adapter.is_placeholder(list(kept["vector"]))


@pytest.mark.integration
def test_this_process_is_seen_holding_an_open_milvus_lite_folder(tmp_path: Path) -> None:
    from components.knowledge_base.milvus_adapter import held_by_this_process
    from components.knowledge_base.milvus_index import lite_folder_in_use, open_milvus_document_store

    folder = tmp_path / "held.db"
    assert not held_by_this_process(folder)
    store = open_milvus_document_store("held", uri=str(folder))
    if not Path("/proc/locks").exists():
        pytest.skip("no kernel lock table on this system")
    assert lite_folder_in_use(folder) and held_by_this_process(folder)
    # A second store of the same file in this process is not refused as "open in another process".
    assert open_milvus_document_store("held_b", uri=str(folder)).client is not store.client


# -- qdrant-haystack and qdrant-client (qdrant_adapter) -------------------------------------------------------------


def test_the_qdrant_store_keeps_its_configuration_public_and_its_converters_signatures() -> None:
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore, converters, filters
    from qdrant_client import QdrantClient

    from components.knowledge_base import qdrant_adapter

    store = QdrantDocumentStore(location=":memory:", index="contract", embedding_dim=DIM, progress_bar=False)
    names = (
        *qdrant_adapter.CONNECTION_PARAMETERS,
        *qdrant_adapter.COLLECTION_PARAMETERS,
        "api_key",
        "metadata",
        "client_kwargs",
        "force_disable_check_same_thread",
        "index",
        "embedding_dim",
        "similarity",
        "on_disk",
        "use_sparse_embeddings",
        "sparse_idf",
        "payload_fields_to_index",
        "write_batch_size",
        "wait_result_from_api",
        "recreate_index",
    )
    _accepts(QdrantDocumentStore.__init__, *(name for name in names if name not in ("client_kwargs", "metadata")))
    for name in names:
        assert hasattr(store, name), f"QdrantDocumentStore has no public attribute {name}"
    # Every connection parameter is one of the client's own; `metadata` rides its **kwargs, as the integration's does.
    assert set(qdrant_adapter.client_params(store)) - {"metadata"} <= set(_parameters(QdrantClient.__init__))
    _accepts(store.get_distance, "similarity")
    _accepts(converters.convert_haystack_documents_to_qdrant_points, "documents", "use_sparse_embeddings")
    _accepts(converters.convert_qdrant_point_to_haystack_document, "point", "use_sparse_embeddings")
    _accepts(converters.convert_id, "_id")
    _accepts(filters.convert_filters_to_qdrant, "filter_term")
    calls = {
        "query_points": ("collection_name", "query", "using", "query_filter", "limit", "with_payload", "with_vectors"),
        "upsert": ("collection_name", "points", "wait"),
        "delete": ("collection_name", "points_selector", "wait"),
        "create_collection": ("collection_name", "vectors_config", "sparse_vectors_config", "shard_number"),
        "create_payload_index": ("collection_name", "field_name", "field_schema"),
        "collection_exists": ("collection_name",),
        "delete_collection": ("collection_name",),
    }
    for name, parameters in calls.items():
        _accepts(getattr(QdrantClient, name), *parameters)


@pytest.mark.integration
def test_qdrant_collections_made_by_the_adapter_and_by_the_integration_are_alike_and_read_alike(
    tmp_path: Path,
) -> None:
    from haystack_integrations.components.retrievers.qdrant import QdrantEmbeddingRetriever
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore
    from qdrant_client import QdrantClient

    from components.knowledge_base import qdrant_adapter

    folder = str(tmp_path / "q")
    options = {"embedding_dim": DIM, "use_sparse_embeddings": True, "sparse_idf": True, "progress_bar": False}
    ours = QdrantDocumentStore(path=folder, index="ours", **options)
    documents = _documents()
    client = qdrant_adapter.open_client(ours)  # local mode: one client per folder, so each step closes its own
    try:
        qdrant_adapter.create_collection(client, ours)
        assert qdrant_adapter.write_documents(client, ours, documents) == 3
        later = {"field": "meta.page", "operator": ">=", "value": 1}
        dense = qdrant_adapter.query_dense(client, ours, documents[1].embedding, later, 2)
        sparse = qdrant_adapter.query_sparse(client, ours, [1, 2], [0.5, 0.5], None, 2)
        qdrant_adapter.delete_documents(client, ours, ["note-2"])
        made = client.get_collection("ours").config
    finally:
        client.close()
    assert [doc.id for doc in dense] == ["note-1", "note-2"] and dense[0].score == pytest.approx(1.0, abs=1e-5)
    assert sparse == []  # no document has sparse vectors
    # The integration makes the same collection on its first write...
    theirs = QdrantDocumentStore(path=folder, index="theirs", **options)
    theirs.write_documents(documents[:1])
    theirs.close()
    with closing(QdrantClient(path=folder)) as reader_client:
        assert reader_client.get_collection("theirs").config == made
    # ... and reads the adapter's points as its own, with its own retriever.
    reader = QdrantDocumentStore(path=folder, index="ours", **options)
    try:
        read = {doc.id: doc for doc in reader.filter_documents()}
        assert set(read) == {"note-0", "note-1"}
        assert read["note-1"].content == documents[1].content and read["note-1"].meta == documents[1].meta
        found = QdrantEmbeddingRetriever(document_store=reader, top_k=1).run(query_embedding=documents[0].embedding)
        assert found["documents"][0].id == "note-0"
    finally:
        reader.close()
