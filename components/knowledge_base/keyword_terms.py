"""Keyword terms for the vector engines: one tokeniser, one stop-word list, and BM25-style sparse vectors.

Milvus tokenises with its built-in BM25 function (the same stop words are passed to its analyzer). Qdrant has no
BM25 of its own, and the usual sparse models (SPLADE, fastembed's BM25) download files, so chunks are turned into
sparse vectors here, offline: each term's index is a stable 31-bit hash and its value is BM25's saturated term
frequency with length normalisation; the collection is created with Qdrant's IDF modifier, so Qdrant multiplies
in the inverse document frequency from its own statistics at query time. A query vector holds each of its
distinct terms with weight 1, so the score is the classic BM25 sum over the query terms.
"""

from __future__ import annotations

import zlib
from collections import Counter

from components.text import bm25
from components.text.analyzer import STOP_WORDS, content_words

# The product's one stop-word list (also passed to Milvus's analyzer, so both sides drop the same words).
ENGLISH_STOP_WORDS: tuple[str, ...] = tuple(sorted(STOP_WORDS))

# The average chunk length is fixed because chunks are cut to a similar size.
AVERAGE_TERMS = 100.0


# The keyword terms of a text: its lower-cased words without stop words, unstemmed (the same rule as Milvus's
# analyzer), by the product's one tokeniser.
terms = content_words


def term_index(term: str) -> int:
    """The sparse-vector index of a term: a stable hash, the same in every process and on every machine."""
    return zlib.crc32(term.encode("utf-8")) & 0x7FFFFFFF


def document_sparse_vector(text: str) -> tuple[list[int], list[float]]:
    """Indices and BM25 term-frequency weights of a chunk's text (IDF is applied by Qdrant)."""
    counts = Counter(term_index(term) for term in terms(text))
    length = sum(counts.values())
    indices = sorted(counts)
    values = [bm25.term_weight(counts[index], length, AVERAGE_TERMS) for index in indices]
    return indices, values


def query_sparse_vector(text: str) -> tuple[list[int], list[float]]:
    """Indices and weights of a query: each distinct term once, weight 1."""
    indices = sorted({term_index(term) for term in terms(text)})
    return indices, [1.0] * len(indices)
