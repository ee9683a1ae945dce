"""Written example documents and graph stores filled with them (embedded PostgreSQL always, Neo4j when set)."""

from __future__ import annotations

import datetime as dt
import os
import uuid

import pytest

from components.knowledge_base.store import ChunkRecord, DocumentRecord
from tests.contract_servers.bolt import bolt_server, bolt_server_session  # noqa: F401 - fixtures

NORDVIK_2019 = (
    "Nordvik SE announced on Thursday that it will end production of the NV900 superjumbo. "
    "Chief executive Henrik Dahl said the decision was painful. He said deliveries would stop in 2021. "
    "One customer reduced its order for the NV900 last month. "
    "The company had launched the NV900 programme in December 2000."
)
NORDVIK_2020 = (
    "Nordvik agreed to pay 1.2 billion euros to settle bribery investigations in Norway, Canada and the "
    "United Kingdom. Johan Lindqvist, the chief executive since April 2019, called it a turning point. "
    "Mr Lindqvist replaced Henrik Dahl as CEO. Dahl led the company from 2012 until 2019. "
    "Two years later, Nordvik Group Inc. opened a plant in Manitoba."
)


def make_document(document_id: str, text: str, date: dt.date | None, title: str = "", chunk_words: int = 40):
    """A document record and its chunks (split every `chunk_words` words, like a splitter would)."""
    document = DocumentRecord(
        document_id=document_id,
        title=title or document_id,
        source=f"test:{document_id}",
        doc_type="txt",
        content_hash=document_id,
        text=text,
        url=f"https://example.org/{document_id}",
        date=date,
    )
    words = text.split()
    chunks = [
        ChunkRecord(
            chunk_id=f"{document_id}-c{i}",
            document_id=document_id,
            chunk_index=i,
            text=" ".join(words[start : start + chunk_words]),
        )
        for i, start in enumerate(range(0, len(words), chunk_words))
    ]
    return document, chunks


def nordvik_documents():
    return [
        make_document("nordvik-2019", NORDVIK_2019, dt.date(2019, 2, 14), "Nordvik to end NV900 production"),
        make_document("nordvik-2020", NORDVIK_2020, dt.date(2020, 1, 28), "Nordvik settles bribery probe"),
    ]


def _new_store(kind: str):
    collection = f"g_{uuid.uuid4().hex[:10]}"
    if kind == "neo4j":
        from components.graph.neo4j_store import Neo4jGraphStore

        return Neo4jGraphStore(
            os.environ["NEO4J_URI"],
            os.environ.get("NEO4J_USERNAME", "neo4j"),
            database=os.environ.get("NEO4J_DATABASE", "neo4j"),
            collection=collection,
        )
    from components.graph.postgres_store import PostgresGraphStore

    return PostgresGraphStore(collection)


BACKENDS = [
    "postgres",
    pytest.param("neo4j", marks=pytest.mark.skipif(not os.environ.get("NEO4J_URI"), reason="NEO4J_URI is not set")),
]


@pytest.fixture(params=BACKENDS)
def empty_store(request, database_url):
    """A fresh, empty graph store of each backend."""
    store = _new_store(request.param)
    yield store
    store.drop()


@pytest.fixture()
def nordvik_store(empty_store):
    """A fresh graph store holding the two Nordvik documents."""
    from components.graph.extraction import LanguageExtractor

    extractor = LanguageExtractor()
    for document, chunks in nordvik_documents():
        empty_store.replace_document(extractor.extract(document, chunks))
    return empty_store


@pytest.fixture(scope="module")
def shared_nordvik_store(database_url):
    """One embedded store with the Nordvik documents for read-only tests of a module."""
    from components.graph.extraction import LanguageExtractor

    store = _new_store("postgres")
    extractor = LanguageExtractor()
    for document, chunks in nordvik_documents():
        store.replace_document(extractor.extract(document, chunks))
    yield store
    store.drop()
