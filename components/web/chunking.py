"""Chunks of fetched text (page Markdown, paper full text), cut by the knowledge base's chunker (`TokenSplitter`),
and scored against the question as the web and arXiv sources cite them.

Query terms pick the chunks worth embedding when a page is long, so a search never embeds a whole site.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any

import numpy as np
from haystack import Document

from components.contracts import ContextChunk, ScoreKind, SourceType
from components.ingestion.formats.markdown import convert_markdown
from components.ingestion.splitter import TokenSplitter
from components.ingestion.structure import ConvertedDocument
from components.knowledge_base.store import cosine_to_relevance
from components.text.analyzer import content_words, words


def query_terms(text: str) -> list[str]:
    """The content words of `text`, lower case, stopwords and one-letter words removed, in order, unique."""
    return list(dict.fromkeys(word for word in content_words(text) if len(word) > 1))


def page_text(markdown: str) -> str:
    """The words a reader sees on a page, as its chunks are cut from them (see `markdown_chunks`)."""
    return _page_document(markdown).text


def markdown_chunks(markdown: str, chunk_tokens: int, model: str) -> list[tuple[str | None, str]]:
    """(section title, text) of each chunk of a page's Markdown, in reading order.

    The knowledge base's own chunker cuts them: the ingestion's Markdown converter (headings become sections,
    images, link targets and emphasis go, the words stay) and `TokenSplitter` (sentences packed whole up to
    `chunk_tokens` word pieces of `model`, never across a heading), without overlap: a search embeds each word once.
    """
    document = _page_document(markdown)
    return [(chunk.section_title, chunk.text) for chunk in _splitter(chunk_tokens, model).split(document)]


def text_chunks(text: str, chunk_tokens: int, model: str) -> list[str]:
    """The chunks of a plain text (a paper's full text: pages split by form feeds, paragraphs by blank lines), cut
    as `markdown_chunks` cuts a page."""
    documents = _splitter(chunk_tokens, model).run(documents=[Document(content=text)])["documents"]
    return [document.content for document in documents]


def _page_document(markdown: str) -> ConvertedDocument:
    # A scraped page has no front matter: a leading rule (---) must not be read as one.
    return convert_markdown(("\n" + (markdown or "")).encode("utf-8"), "page.md")


@lru_cache(maxsize=4)
def _splitter(chunk_tokens: int, model: str) -> TokenSplitter:
    splitter = TokenSplitter(chunk_tokens=chunk_tokens, overlap_tokens=0, model=model)
    splitter.warm_up()
    return splitter


def pick_chunks(chunks: list[str], terms: list[str], limit: int) -> list[int]:
    """Indexes of the `limit` chunks that mention the query terms most (ties: earlier first), in reading order."""
    if len(chunks) <= limit:
        return list(range(len(chunks)))
    wanted = set(terms)

    def overlap(index: int) -> tuple[int, int, int]:
        chunk_words = words(chunks[index])
        return (len(wanted.intersection(chunk_words)), sum(1 for word in chunk_words if word in wanted), -index)

    best = sorted(range(len(chunks)), key=overlap, reverse=True)[:limit]
    return sorted(best)


def query_cosines(model: Any, query: str, query_embedding: list[float] | None, texts: list[str]) -> list[float]:
    """The cosine of each text to the question (its given embedding, else `model`'s), the texts embedded at once."""
    vector = np.asarray(query_embedding, dtype=np.float32) if query_embedding else model.embed_one(query)
    return [float(value) for value in model.embed(texts) @ vector]


def fetched_chunk(
    source_type: SourceType, key: str, text: str, cosine: float | None, **attribution: Any
) -> ContextChunk:
    """A chunk of fetched text: its id a hash of `key` (what identifies it at its source), its relevance the
    cosine to the question (kept as the raw score), and its `attribution` (source_id, source_title, ...)."""
    return ContextChunk(
        id=hashlib.sha256(key.encode()).hexdigest()[:32],
        source_type=source_type,
        text=text,
        semantic_relevance=cosine_to_relevance(cosine),
        raw_score=cosine,
        score_kind=ScoreKind.COSINE if cosine is not None else ScoreKind.NONE,
        **attribution,
    )
