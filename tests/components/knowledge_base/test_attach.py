"""Bring your own store: a collection that a Haystack indexing pipeline (splitter, embedder, `DocumentWriter`) filled
is attached, enriched, searched and cited, and its rows are the same afterwards."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from haystack import Document, Pipeline
from haystack.components.preprocessors import DocumentSplitter
from haystack.components.writers import DocumentWriter
from haystack.document_stores.types import DuplicatePolicy

from tests.components.knowledge_base.conftest import backend_env, environment

pytestmark = pytest.mark.integration

# Written for this test: three short notes a team might have indexed with Haystack.
NOTES = {
    "notes/harbour.md": (
        "The Harbour Bridge survey was completed in March 2019. Engineers from Calder Works measured the cable "
        "tension on every span. The report recommended replacing two anchor bolts before winter."
    ),
    "notes/orchard.txt": (
        "Lena Ortiz founded the Northfield orchard cooperative in 2011. The cooperative sells apples and pears to "
        "schools in three counties. It opened a cider press in 2016."
    ),
    "notes/satellite.md": (
        "The Kestrel-2 weather satellite launched from a coastal site in 2021. Its radiometer maps sea surface "
        "temperature every six hours. Ground stations relay the data to forecasters."
    ),
}


def _user_store(backend: str, name: str, folder: Path) -> Any:
    """The document store a team would configure for itself: the integration's defaults, its own names."""
    if backend == "pgvector":
        from haystack.utils import Secret
        from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore

        return PgvectorDocumentStore(
            connection_string=Secret.from_env_var("DATABASE_URL"),
            table_name=name,
            embedding_dimension=384,
            keyword_index_name=f"{name}_kw",
            hnsw_index_name=f"{name}_vec",
        )
    if backend == "qdrant":
        from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

        return QdrantDocumentStore(path=str(folder / "qdrant"), index=name, embedding_dim=384, progress_bar=False)
    # pymilvus reads MILVUS_URI when it is first imported: the product's Milvus module prepares it for a lite path.
    importlib.import_module("components.knowledge_base.milvus_index")
    from milvus_haystack import MilvusDocumentStore

    (folder / "milvus").mkdir(parents=True, exist_ok=True)
    return MilvusDocumentStore(collection_name=name, connection_args={"uri": str(folder / "milvus" / "kb.db")})


def _index_with_haystack(store: Any) -> None:
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
    )

    from components.embedding.model import resolve_model_path
    from components.settings import get_settings

    pipeline = Pipeline()
    pipeline.add_component("splitter", DocumentSplitter(split_by="period", split_length=1, split_overlap=0))
    pipeline.add_component(
        "embedder", SentenceTransformersDocumentEmbedder(model=resolve_model_path(get_settings().embedding_model))
    )
    pipeline.add_component("writer", DocumentWriter(document_store=store, policy=DuplicatePolicy.OVERWRITE))
    pipeline.connect("splitter", "embedder")
    pipeline.connect("embedder", "writer")
    documents = [Document(content=text, meta={"file_path": path}) for path, text in NOTES.items()]
    pipeline.run({"splitter": {"documents": documents}})


def _snapshot(store: Any) -> list[tuple]:
    """Every row the user wrote: id, content, meta and embedding."""
    rows = []
    for doc in store.filter_documents():
        embedding = None if doc.embedding is None else tuple(np.asarray(doc.embedding, dtype=float).tolist())
        rows.append((doc.id, doc.content, json.dumps(doc.meta, sort_keys=True, default=str), embedding))
    return sorted(rows)


def _unchanged(after: list[tuple], before: list[tuple]) -> bool:
    """The same rows: ids, contents and metas equal, embeddings equal to float32's precision. Qdrant's local mode
    normalises a cosine collection's vectors again when it loads them, so merely reopening the folder moves a value by
    a unit in float32's last place (2e-8 measured); rounding both sides to five digits split a value lying on a
    rounding boundary on one machine's embeddings, with nothing written."""
    if [row[:3] for row in after] != [row[:3] for row in before]:
        return False
    return all(
        (a is None and b is None) or (a is not None and b is not None and np.allclose(a, b, rtol=0, atol=1e-6))
        for (*_, a), (*_, b) in zip(after, before, strict=True)
    )


@pytest.fixture(params=["pgvector", "qdrant", "milvus"])
def attached(request: pytest.FixtureRequest, tmp_path: Path, database_url: str) -> Iterator[tuple[str, str, Any, Any]]:
    backend = request.param
    name = f"team_{backend}_{tmp_path.name[-6:].replace('-', '_')}".lower()
    with environment({**backend_env(backend, tmp_path), "DATABASE_URL": database_url}):
        user_store = _user_store(backend, name, tmp_path)
        _index_with_haystack(user_store)
        before = _snapshot(user_store)
        assert len(before) >= 9
        _release(user_store)
        yield backend, name, before, _schema(backend, name)
        from components.knowledge_base.factory import close_knowledge_bases

        close_knowledge_bases()


def _release(store: Any) -> None:
    """Local Qdrant and milvus-lite lock their folder to one client: the team's writer lets go before we open it."""
    close = getattr(store, "close", None)  # QdrantDocumentStore.close lets go of its local folder
    if close is not None:
        close()


def test_attach_enrich_ask_and_cite_leave_the_users_rows_unchanged(
    attached: tuple[str, str, Any, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from components.knowledge_base.attach import ATTACHED
    from components.knowledge_base.enrichment import KnowledgeBaseEnricher
    from components.knowledge_base.factory import document_store_for, open_knowledge_base
    from components.knowledge_base.search import KnowledgeBaseSearch
    from components.settings import get_settings

    backend, name, before, schema = attached
    settings = get_settings()

    # Attach: the documents are recognised from Haystack's own fields (the splitter's source_id, the file path).
    from pipelines.cli import main

    assert main(["kb", "attach", name, "--backend", backend]) == 0
    printed = capsys.readouterr().out
    assert "3 documents" in printed and f"KB_COLLECTION={name}" in printed, printed
    # A mistyped name is one sentence naming what exists, the closest first, and creates nothing.
    existing = _collections(backend)
    mistyped = name.replace("team_", "taem_")
    assert main(["kb", "attach", mistyped, "--backend", backend]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"research: The {backend} knowledge base has no collection {mistyped!r} (it holds {name!r}")
    assert error.endswith("nothing was created.") and len(error.splitlines()) == 1
    assert _collections(backend) == existing
    # `kb enrich` refuses the same mistyped name the same way, instead of enriching a new empty collection.
    assert main(["kb", "enrich", "--collection", mistyped]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"research: The {backend} knowledge base has no collection {mistyped!r}")
    assert _collections(backend) == existing
    knowledge_base = open_knowledge_base(settings, name)
    from ingest.ingestor import default_hooks

    enricher = KnowledgeBaseEnricher(knowledge_base, hooks=default_hooks(collection=knowledge_base.collection))
    assert enricher.recognise().registered == 0  # already recognised by the command
    titles = {summary.document.title for summary in knowledge_base.list_documents(limit=10)[0]}
    assert titles == {"harbour.md", "orchard.txt", "satellite.md"}
    assert all(s.document.metadata[ATTACHED] for s in knowledge_base.list_documents(limit=10)[0])

    # Enrich: sentence vectors, term statistics and graph facts beside the rows; a second run has nothing to do.
    report = enricher.enrich()
    assert report.enriched == 3 and report.evidence_chunks == len(before) and not report.problems
    again = enricher.enrich()
    assert again.enriched == 0 and again.registered == 0
    assert knowledge_base.term_statistics(["orchard"]) is not None
    from components.graph.factory import graph_store_from_settings

    graph = graph_store_from_settings(name)
    graph.warm_up()
    assert graph.known_names({"lena ortiz"}) or graph.known_names({"northfield"})
    # The assistant never deletes or replaces what another pipeline wrote.
    from components.knowledge_base.knowledge_base import ProtectedDocument

    orchard = next(s.document for s in knowledge_base.list_documents(limit=10)[0] if s.document.title == "orchard.txt")
    with pytest.raises(ProtectedDocument, match="attached collection"):
        knowledge_base.delete_document(orchard.document_id)
    knowledge_base.close()

    # Ask: the search component, given the integration's store as the catalog gives it, finds and attributes.
    for mode in ("dense", "keyword", "hybrid"):
        search = KnowledgeBaseSearch(document_store=document_store_for(settings, name), mode=mode, limit=3)
        search.warm_up()
        result = search.run(query="Who founded the orchard cooperative?")
        assert result["status"].status == "success", (mode, result["status"])
        top = result["documents"][0]
        assert "Lena Ortiz" in top.content, mode
        assert top.meta["document_title"] == "orchard.txt"

    # Filters reach the chunks of recognised documents through the registry.
    search = KnowledgeBaseSearch(document_store=document_store_for(settings, name), mode="dense", limit=5)
    search.warm_up()
    found = search.run(query="satellite launch", filters={"doc_types": ["txt"]})["documents"]
    # Only the txt note passes the filter, however close the satellite note is to the question.
    assert found and {doc.meta["document_title"] for doc in found} == {"orchard.txt"}

    # Nothing the team wrote was modified or deleted: neither its rows nor its collection's schema and indexes.
    assert _schema(backend, name) == schema
    assert _unchanged(_snapshot(_reopen(backend, name)), before)


@pytest.mark.parametrize("attached", ["pgvector"], indirect=True)  # Qdrant and Milvus keep their own vector indexes
def test_enrich_index_adds_only_an_hnsw_index_to_an_attached_pgvector_table(
    attached: tuple[str, str, Any, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """`research kb enrich --index`, the explicit opt-in, is the one change to an attached table: one HNSW index."""
    backend, name, before, schema = attached
    from pipelines.cli import main

    assert main(["kb", "attach", name, "--backend", backend]) == 0
    assert _schema(backend, name) == schema
    assert main(["kb", "enrich", "--collection", name, "--index"]) == 0
    capsys.readouterr()
    after = _schema(backend, name)
    added = set(after["indexes"]) - set(schema["indexes"])
    assert {**after, "indexes": schema["indexes"]} == schema and len(added) == 1
    assert "USING hnsw (embedding vector_cosine_ops)" in next(iter(added))[1]
    assert _unchanged(_snapshot(_reopen(backend, name)), before)


def _schema(backend: str, name: str) -> Any:
    """What defines the collection beside its rows: pgvector's columns, indexes and comment; Qdrant's collection
    config, metadata and payload indexes; Milvus's fields, functions, properties and indexes."""
    from components.knowledge_base.factory import close_knowledge_bases
    from components.settings import get_settings

    close_knowledge_bases()
    settings = get_settings()
    if backend == "pgvector":
        import psycopg

        with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
            table = {"t": f'"{name}"'}
            columns = conn.execute(
                "SELECT attname, format_type(atttypid, atttypmod), attstorage, attnotnull FROM pg_attribute "
                "WHERE attrelid = to_regclass(%(t)s) AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                table,
            ).fetchall()
            indexes = conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s ORDER BY indexname", (name,)
            ).fetchall()
            comment = conn.execute("SELECT obj_description(to_regclass(%(t)s), 'pg_class')", table).fetchone()
        return {"columns": columns, "indexes": sorted(indexes), "comment": comment}
    if backend == "qdrant":
        from qdrant_client import QdrantClient

        client = QdrantClient(path=str(settings.qdrant_path))
        try:
            info = client.get_collection(name)
            return {"config": info.config.model_dump(), "payload_schema": info.payload_schema}
        finally:
            client.close()
    from pymilvus import MilvusClient

    client = MilvusClient(uri=str(settings.milvus_uri))
    description = client.describe_collection(name)
    # An index's row counts and build state change with flushes; its definition must not.
    indexes = {
        index: {key: value for key, value in client.describe_index(name, index).items() if "rows" not in key}
        for index in client.list_indexes(name)
    }
    return {
        key: description.get(key)
        for key in ("fields", "functions", "properties", "enable_dynamic_field", "num_partitions", "description")
    } | {"indexes": indexes}


def _collections(backend: str) -> list[str]:
    """The backend's collections (pgvector: tables), listed by its own client with every other client closed."""
    from components.knowledge_base.factory import close_knowledge_bases
    from components.settings import get_settings

    close_knowledge_bases()  # local Qdrant and milvus-lite open a folder through one client
    settings = get_settings()
    if backend == "pgvector":
        import psycopg

        query = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
            return sorted(row[0] for row in conn.execute(query))
    if backend == "qdrant":
        from qdrant_client import QdrantClient

        client = QdrantClient(path=str(settings.qdrant_path))
        try:
            return sorted(found.name for found in client.get_collections().collections)
        finally:
            client.close()
    from pymilvus import MilvusClient

    return sorted(MilvusClient(uri=str(settings.milvus_uri)).list_collections())


def _reopen(backend: str, name: str) -> Any:
    """The team's own store again, as its pipeline would open it."""
    from components.settings import get_settings

    settings = get_settings()
    if backend == "pgvector":
        return _user_store(backend, name, Path(settings.data_dir))
    if backend == "qdrant":
        return _user_store(backend, name, Path(settings.qdrant_path).parent)
    return _user_store(backend, name, Path(settings.milvus_uri).parent.parent)


def test_the_assistants_own_documents_are_not_recognised_again(store, embedding_model) -> None:
    """A collection holding both what the assistant ingested and rows another pipeline added: `enrich` registers only
    the other pipeline's, and leaves the ingested documents as they are."""
    import datetime as dt

    from haystack.document_stores.types import DuplicatePolicy

    from components.knowledge_base.enrichment import KnowledgeBaseEnricher
    from components.knowledge_base.store import ChunkRecord, DocumentRecord

    text = "The Kestrel-2 radiometer maps sea surface temperature every six hours."
    own = DocumentRecord(
        "doc-own", "Kestrel notes", "notes/kestrel.md", "md", "hash-own", text=text, date=dt.date(2021, 5, 1)
    )
    store.upsert_document(
        own, [ChunkRecord("doc-own-0", "doc-own", 0, text, embedding=embedding_model.embed([text])[0])]
    )
    other = "Lena Ortiz founded the Northfield orchard cooperative in 2011."
    store.index.document_store.write_documents(
        [
            Document(
                content=other,
                meta={"file_path": "team/orchard.txt"},
                embedding=embedding_model.embed([other])[0].tolist(),
            )
        ],
        policy=DuplicatePolicy.OVERWRITE,
    )
    report = KnowledgeBaseEnricher(store, hooks=[]).recognise()
    assert (report.documents, report.registered, report.ingested) == (2, 1, 1)
    titles = sorted(summary.document.title for summary in store.list_documents(limit=10)[0])
    assert titles == ["Kestrel notes", "orchard.txt"]
    assert KnowledgeBaseEnricher(store, hooks=[]).recognise().registered == 0


def test_an_attached_collections_keyword_index_records_the_text_analysis_that_counted_it(
    attached: tuple[str, str, Any, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Enrichment counts an attached collection's terms into the assistant's own keyword index beside it; a version
    that analyses text otherwise must refuse it, as it refuses a collection it made, not mis-score every keyword
    search (and the collection the team wrote is still not altered)."""
    from components.knowledge_base import chunk_index
    from components.knowledge_base.factory import open_knowledge_base
    from components.knowledge_base.store import KnowledgeBaseMismatch
    from components.settings import get_settings
    from pipelines.cli import main

    backend, name, before, schema = attached
    assert main(["kb", "attach", name, "--backend", backend, "--enrich"]) == 0
    capsys.readouterr()
    knowledge_base = open_knowledge_base(get_settings(), name)
    assert knowledge_base.keyword_search("orchard cooperative", 3)  # the analysis that counted it: fine
    knowledge_base.close()
    monkeypatch.setattr(chunk_index, "text_analysis", lambda: "another_pipeline 1.0 / 000000000000")
    with pytest.raises(KnowledgeBaseMismatch, match="was keyword-indexed by the text analysis"):
        open_knowledge_base(get_settings(), name).keyword_search("orchard cooperative", 3)
    monkeypatch.undo()
    assert _schema(backend, name) == schema
    assert _unchanged(_snapshot(_reopen(backend, name)), before)
