"""A small corpus with known answers, shared by the backend tests: four documents of different types and dates."""

from __future__ import annotations

import datetime as dt
import hashlib

from components.knowledge_base.store import ChunkRecord, DocumentRecord

DOCUMENTS = [
    (
        "doc-vectors",
        "Vector search in PostgreSQL",
        "notes/pgvector.md",
        "md",
        dt.date(2024, 1, 10),
        [
            (
                "pgvector adds a vector column type to PostgreSQL and HNSW indexes for approximate nearest neighbours.",
                {"section_title": "Indexes"},
            ),
            (
                "An HNSW index trades a little recall for much faster queries over millions of embeddings.",
                {"section_title": "Indexes"},
            ),
        ],
    ),
    (
        "doc-milvus",
        "Full-text search in Milvus",
        "papers/milvus.pdf",
        "pdf",
        dt.date(2023, 6, 1),
        [
            (
                "Milvus computes BM25 sparse vectors from raw text with a built-in function at insert time.",
                {"page_number": 1},
            ),
            (
                "Sparse inverted indexes answer keyword queries; dense indexes answer semantic queries.",
                {"page_number": 2},
            ),
            ("Hybrid search fuses both result lists with reciprocal rank fusion.", {"page_number": 3}),
        ],
    ),
    (
        "doc-bread",
        "Baking sourdough bread",
        "https://example.org/bread.html",
        "html",
        dt.date(2022, 3, 15),
        [
            (
                "A sourdough starter is flour and water fermented by wild yeast and lactic acid bacteria.",
                {"section_title": "Starter"},
            ),
            ("Bake the loaf in a hot Dutch oven for a crisp crust and an open crumb.", {"section_title": "Baking"}),
        ],
    ),
    (
        "doc-solar",
        "Solar panel efficiency",
        "notes/solar.txt",
        "txt",
        None,
        [("Photovoltaic panels convert about twenty percent of sunlight into electricity.", {})],
    ),
]


def corpus(embedding_model) -> list[tuple[DocumentRecord, list[ChunkRecord]]]:
    """The documents with embedded chunks."""
    documents = [
        (document_id, title, source, doc_type, date, source if source.startswith("http") else None, chunks)
        for document_id, title, source, doc_type, date, chunks in DOCUMENTS
    ]
    return embedded_documents(embedding_model, documents, origin="test", separator=":")


def embedded_documents(
    embedding_model, documents: list[tuple], origin: str, separator: str
) -> list[tuple[DocumentRecord, list[ChunkRecord]]]:
    """Each `(document_id, title, source, doc_type, date, url, [(chunk text, chunk metadata)])` as a document record
    (metadata `{"origin": origin}`) with its chunks, ids `<document_id><separator><index>`, embedded in one batch."""
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
            url=url,
            date=date,
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
