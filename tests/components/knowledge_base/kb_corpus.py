"""Small corpora with known answers, shared by the knowledge-base tests: written documents (`tests/data/kb_*.json`)
with their chunks embedded by the real MiniLM model."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

from components.contracts import ScoreKind
from components.knowledge_base.store import ChunkRecord, DocumentRecord

DATA = Path(__file__).resolve().parents[2] / "data"


def load_documents(name: str) -> list[tuple]:
    """The written documents of `tests/data/NAME.json` as rows of (document_id, title, source, doc_type, date, url,
    [(chunk text, chunk metadata)]), what `build_records` takes."""
    documents = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return [
        (
            document["document_id"],
            document["title"],
            document["source"],
            document["doc_type"],
            dt.date.fromisoformat(document["date"]) if document["date"] else None,
            document["url"],
            [(chunk["text"], chunk["metadata"]) for chunk in document["chunks"]],
        )
        for document in documents
    ]


# Four documents of different types and dates, shared by the backend tests.
DOCUMENTS = load_documents("kb_corpus")
# Five documents the conformance suite runs every backend on (one undated, one chunk with stored sentence spans).
CONFORMANCE_DOCUMENTS = load_documents("kb_conformance_corpus")

# A keyword query whose best chunk is known: the sourdough starter ("doc-bread:0").
KEYWORD_QUERY = "sourdough starter yeast"


def assert_keyword_ranking(ids: list[str], kinds: list[ScoreKind], scores: list[float]) -> None:
    """The hits of `KEYWORD_QUERY`, given as their chunk ids, score kinds and raw scores: the starter chunk first,
    every score a positive BM25 score, best first."""
    assert ids[0] == "doc-bread:0"
    assert all(kind is ScoreKind.BM25 for kind in kinds) and all(score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)


def corpus(embedding_model) -> list[tuple[DocumentRecord, list[ChunkRecord]]]:
    """The documents with embedded chunks (chunk ids `DOCUMENT:INDEX`)."""
    return build_records(embedding_model, DOCUMENTS, origin="test", separator=":")


def conformance_corpus(embedding_model) -> list[tuple[DocumentRecord, list[ChunkRecord]]]:
    """The conformance documents with embedded chunks (chunk ids `DOCUMENT-INDEX`)."""
    return build_records(embedding_model, CONFORMANCE_DOCUMENTS, origin="conformance", separator="-")


def build_records(
    embedding_model, documents: list[tuple], *, origin: str, separator: str
) -> list[tuple[DocumentRecord, list[ChunkRecord]]]:
    """`documents` (rows of document_id, title, source, doc_type, date, url, [(chunk text, chunk metadata)]) as
    records whose chunks carry their MiniLM embeddings, chunk ids `DOCUMENT<separator>INDEX` and metadata `origin`."""
    texts = [text for *_, chunks in documents for text, _ in chunks]
    vectors = iter(embedding_model.embed(texts))
    result = []
    for document_id, title, source, doc_type, date, url, chunks in documents:
        full_text = " ".join(text for text, _ in chunks)
        document = DocumentRecord(
            document_id=document_id,
            title=title,
            source=source,
            doc_type=doc_type,
            content_hash=hashlib.sha256(full_text.encode()).hexdigest(),
            text=full_text,
            date=date,
            url=url,
            metadata={"origin": origin},
        )
        records = [
            ChunkRecord(
                chunk_id=f"{document_id}{separator}{index}",
                document_id=document_id,
                chunk_index=index,
                text=text,
                embedding=next(vectors),
                metadata=dict(meta),
            )
            for index, (text, meta) in enumerate(chunks)
        ]
        result.append((document, records))
    return result
