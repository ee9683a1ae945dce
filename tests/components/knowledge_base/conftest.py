"""Fixtures of the knowledge-base tests: which backend the conformance suite runs on, and how to reach it.

To run the conformance suite on another backend, add its name to `KB_BACKENDS` and one branch to each of
`backend_env` (the settings that select it and put its data in `folder`) and `unreachable_env` (settings that
point it at a closed 127.0.0.1 port). `make_store` builds the integration's document store the settings choose and
the `KnowledgeBase` over it, as the components do in `warm_up()`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from components.knowledge_base.knowledge_base import KnowledgeBase
from tests.contract_servers import free_port as closed_port  # re-exported: the knowledge-base tests' name for it

KB_BACKENDS = ["pgvector", "milvus", "qdrant"]


def backend_env(backend: str, folder: Path) -> dict[str, str]:
    """Environment variables that select `backend` with its data in `folder` (pgvector: the session database)."""
    if backend == "pgvector":
        return {"KB_BACKEND": "pgvector"}
    if backend == "milvus":
        return {"KB_BACKEND": "milvus", "MILVUS_URI": str(folder / "milvus" / "kb.db")}
    if backend == "qdrant":
        return {"KB_BACKEND": "qdrant", "QDRANT_PATH": str(folder / "qdrant")}
    raise ValueError(f"no test setup for knowledge-base backend {backend!r}")


def unreachable_env(backend: str) -> dict[str, str]:
    """Environment variables that point `backend` at a closed port on 127.0.0.1."""
    if backend == "pgvector":
        return {
            "KB_BACKEND": "pgvector",
            "DATABASE_URL": f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2",
        }
    if backend == "milvus":
        return {"KB_BACKEND": "milvus", "MILVUS_URI": f"http://127.0.0.1:{closed_port()}"}
    if backend == "qdrant":
        return {"KB_BACKEND": "qdrant", "QDRANT_URL": f"http://127.0.0.1:{closed_port()}"}
    raise ValueError(f"no unreachable setup for knowledge-base backend {backend!r}")


def make_document_store(backend: str, collection: str, tmp_path: Path):  # noqa: ANN201 - the integration's class
    """The integration's document store of `backend` for `collection`, as the catalog gives it to components."""
    from components.knowledge_base.factory import document_store_for
    from components.settings import Settings

    env = backend_env(backend, tmp_path)
    return document_store_for(Settings(**{key.lower(): value for key, value in env.items()}), collection)


def make_store(backend: str, collection: str, tmp_path: Path) -> KnowledgeBase:
    """The knowledge base over `backend`'s document store for `collection`, as the components build it."""
    from components.knowledge_base.factory import knowledge_base_for

    return knowledge_base_for(make_document_store(backend, collection, tmp_path))


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Set `values` in the environment and re-read the settings; restore both afterwards."""
    from components.settings import reload_settings

    with pytest.MonkeyPatch.context() as patch:
        for key, value in values.items():
            patch.setenv(key, value)
        reload_settings()
        try:
            yield
        finally:
            patch.undo()
            reload_settings()


@dataclass
class Backend:
    """The backend a conformance run uses: its name and the data folder its settings point at."""

    name: str
    folder: Path

    def env(self) -> dict[str, str]:
        return backend_env(self.name, self.folder)

    def document_store(self, collection: str):  # noqa: ANN201 - the integration's class
        return make_document_store(self.name, collection, self.folder)

    def store(self, collection: str) -> KnowledgeBase:
        return make_store(self.name, collection, self.folder)


@pytest.fixture(scope="module", params=KB_BACKENDS)
def kb_backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, database_url: str
) -> Iterator[Backend]:
    """Each backend in turn, selected in the settings the components read for the whole module."""
    backend = Backend(request.param, tmp_path_factory.mktemp(f"kb-{request.param}"))
    with environment(backend.env()):
        yield backend
    from components.knowledge_base.factory import close_knowledge_bases

    close_knowledge_bases()


@pytest.fixture()
def unreachable(kb_backend: Backend) -> Iterator[None]:
    """The settings point the current backend at a closed port for one test."""
    # No retries: one refused connection per call is enough to see the status, and keeps the test fast.
    with environment({**unreachable_env(kb_backend.name), "TOOL_RETRIES": "0"}):
        yield


@contextmanager
def qdrant_books(folder: Path, embedding_model) -> Iterator[KnowledgeBase]:  # noqa: ANN001
    """The written knowledge-base corpus (`kb_corpus`) in collection `books` of a local Qdrant folder, selected in the
    settings the components read: what the book-content component and its tool are tested on."""
    from tests.components.knowledge_base.kb_corpus import corpus

    with environment({"KB_BACKEND": "qdrant", "QDRANT_PATH": str(folder), "KB_COLLECTION": "books"}):
        from components.knowledge_base.factory import close_knowledge_bases, open_knowledge_base

        store = open_knowledge_base()
        for document, chunks in corpus(embedding_model):
            store.upsert_document(document, chunks)
        try:
            yield store
        finally:
            close_knowledge_bases()
