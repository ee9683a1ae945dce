"""Documents as ingestion stores them, for the evaluations that extract a corpus (entity kinds, event confidence):
a model and its threshold are fitted on the extraction the product makes, not on the corpus as it is written."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from components.embedding.model import get_embedding_model
from components.ingestion.formats import convert_bytes
from components.ingestion.splitter import TokenSplitter
from components.settings import get_settings


def as_ingested(documents: list[Any]) -> tuple[list[Any], list[list[Any]]]:
    """The documents as ingestion stores them (their text converted as a text file is: paragraphs a blank line
    apart) and each one's chunks as ingestion makes them (the settings' splitter), with the in-context sentence
    vectors of the same forward pass, so that the extractor reads the sentence vectors it reads at ingestion."""
    settings = get_settings()
    overlap = min(settings.chunk_overlap_tokens, settings.chunk_tokens // 2)
    splitter = TokenSplitter(settings.chunk_tokens, overlap, settings.embedding_model)
    converted = [convert_bytes(d.text.encode("utf-8"), "document.txt", "txt") for d in documents]
    documents = [SimpleNamespace(**{**vars(d), "text": c.text}) for d, c in zip(documents, converted, strict=True)]
    split = [splitter.split(c) for c in converted]
    flat = [chunk for chunks in split for chunk in chunks]
    model = get_embedding_model(settings.embedding_model)
    _, vectors, kept = model.embed_with_sentence_spans([c.text for c in flat], [c.sentence_spans for c in flat])
    records = iter(
        SimpleNamespace(
            chunk_index=chunk.chunk_index,
            text=chunk.text,
            metadata={"char_start": chunk.char_start, "char_end": chunk.char_end},
            sentence_spans=spans,
            sentence_embeddings=rows,
        )
        for chunk, spans, rows in zip(flat, kept, vectors, strict=True)
    )
    return documents, [[next(records) for _ in chunks] for chunks in split]
