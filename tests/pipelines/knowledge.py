"""A small knowledge base for pipeline tests: a few written paragraphs in a fresh collection of the session's
embedded PostgreSQL, and a catalog whose knowledge-base components use that collection."""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from pathlib import Path

import yaml

from tests.fixture_texts import SUPER_BOWL_TEXT, WARSAW_TEXT

PARAGRAPHS = [
    (
        "warsaw",
        "Warsaw",
        "2021-03-01",
        WARSAW_TEXT,
    ),
    (
        "super-bowl",
        "Super Bowl 50",
        "2016-02-08",
        SUPER_BOWL_TEXT,
    ),
    (
        "photosynthesis",
        "Photosynthesis",
        "2019-06-15",
        "In photosynthesis, plants and algae turn the energy of light into chemical energy. "
        "The process happens in the chloroplasts and gives off oxygen as a by-product.",
    ),
    (
        "hnsw",
        "HNSW indexes",
        "2023-09-30",
        "Hierarchical navigable small world graphs index vectors for approximate nearest neighbour search. "
        "Each layer is a proximity graph, and a search descends from the sparse top layer to the dense bottom one.",
    ),
    (
        "curie",
        "Marie Curie",
        None,
        "Marie Curie, a physicist and chemist, led early research on radioactivity. She was the first woman "
        "awarded a Nobel Prize, and she remains the one person to have won Nobel Prizes in two different sciences.",
    ),
]

REPO_CATALOG = Path(__file__).resolve().parents[2] / "pipelines.yaml"


def fill_collection(collection: str, settings, embedding_model, paragraphs=None) -> None:  # noqa: ANN001
    """Write `paragraphs` (`PARAGRAPHS` when None; one chunk each, embedded with the local model) into `collection`."""
    from components.knowledge_base.factory import open_knowledge_base
    from components.knowledge_base.store import ChunkRecord, DocumentRecord

    store = open_knowledge_base(settings, collection)
    paragraphs = PARAGRAPHS if paragraphs is None else paragraphs
    vectors = embedding_model.embed([text for *_, text in paragraphs])
    for (doc_id, title, date, text), vector in zip(paragraphs, vectors, strict=True):
        document = DocumentRecord(
            document_id=doc_id,
            title=title,
            source=f"https://example.org/{doc_id}",
            doc_type="txt",
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
            text=text,
            url=f"https://example.org/{doc_id}",
            date=dt.date.fromisoformat(date) if date else None,
        )
        chunk = ChunkRecord(chunk_id=f"{doc_id}-0", document_id=doc_id, chunk_index=0, text=text, embedding=vector)
        store.upsert_document(document, [chunk])


def catalog_yaml_for(collection: str) -> str:
    """The repository's catalog with every component that reads a collection pointed at `collection`."""
    data = yaml.safe_load(REPO_CATALOG.read_text(encoding="utf-8"))
    for entry in data["pipelines"].values():
        for component in entry["pipeline"]["components"].values():
            if "collection" in (component.get("init_parameters") or {}):
                component["init_parameters"]["collection"] = collection
    return yaml.safe_dump(data, sort_keys=False)


def fresh_collection_name() -> str:
    return f"t_{uuid.uuid4().hex[:10]}"
