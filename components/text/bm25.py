"""BM25: the one formula for every keyword score the project computes itself.

Okapi BM25 with Lucene's never-negative IDF, `k1` 1.2 and `b` 0.75. Used by the Qdrant sparse vectors (the term
weights; Qdrant multiplies in the IDF), the research ranker's evidence and the citation check's term weights (IDF),
and the benchmark's numpy keyword floor. Full-text ranking a store does itself (PostgreSQL's `ts_rank`, Milvus's
built-in BM25 function) is the engine's own and is not this.

Usage:
```python
score = sum(idf(n_chunks, df[term]) * term_weight(tf[term], length, average) for term in query_terms)
```
"""

from __future__ import annotations

import math
from typing import Any

K1 = 1.2
B = 0.75


def idf(document_count: int, document_frequency: int) -> float:
    """BM25's inverse document frequency of a term held by `document_frequency` of `document_count` texts."""
    return math.log(1.0 + (document_count - document_frequency + 0.5) / (document_frequency + 0.5))


def term_weight(frequency: Any, length: Any, average_length: float, k1: float = K1, b: float = B) -> Any:
    """BM25's saturated, length-normalised term frequency (numbers or numpy arrays alike).

    :param frequency: how often the term occurs in the text.
    :param length: the text's length in terms.
    :param average_length: the collection's average length; 0 or less leaves the length out.
    """
    norm = k1 * (1.0 - b + b * length / average_length) if average_length > 0 else k1
    return frequency * (k1 + 1.0) / (frequency + norm)
