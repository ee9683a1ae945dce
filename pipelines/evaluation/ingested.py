"""Documents as ingestion stores them, for the evaluations that extract a corpus (entity kinds, event confidence):
a model and its threshold are fitted on the extraction the product makes, not on the corpus as it is written."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from components.embedding.model import get_embedding_model
from components.ingestion.formats import convert_bytes
from components.ingestion.splitter import TokenSplitter
from components.knowledge_base.store import ChunkRecord
from components.settings import get_settings
from ingest.ingestor import chunk_records, chunk_sentences


def as_ingested(documents: list[Any]) -> tuple[list[Any], list[list[ChunkRecord]]]:
    """The documents as ingestion stores them (their text converted as a text file is: paragraphs a blank line
    apart) and each one's chunk records as ingestion writes them (ingestion's splitter and `chunk_records`), with
    the embeddings and in-context sentence vectors of one forward pass, so that the extractor reads the sentence
    vectors it reads at ingestion."""
    splitter = TokenSplitter.from_settings()
    converted = [convert_bytes(d.text.encode("utf-8"), "document.txt", "txt") for d in documents]
    documents = [SimpleNamespace(**{**vars(d), "text": c.text}) for d, c in zip(documents, converted, strict=True)]
    split = [splitter.split(c) for c in converted]
    flat = [chunk for chunks in split for chunk in chunks]
    model = get_embedding_model(get_settings().embedding_model)
    vectors, sentence_vectors, kept = model.embed_with_sentence_spans(
        [c.text for c in flat], [chunk_sentences(c) for c in flat]
    )
    embedded = iter(zip(vectors, zip(kept, sentence_vectors, strict=True), strict=True))
    records = []
    for document, chunks in zip(documents, split, strict=True):
        embeddings, sentences = zip(*[next(embedded) for _ in chunks], strict=True) if chunks else ((), ())
        records.append(chunk_records(document, chunks, list(embeddings), list(sentences)))
    return documents, records
