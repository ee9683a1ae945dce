"""Lexical evidence shared by the ranker and the citation check: term weights from the product's one lexical analysis
(`components.text.analyzer`), so that both agree on what a term is."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from components.text import bm25


def idf_weights(query_terms: Iterable[str], texts_terms: Sequence[set[str]]) -> dict[str, float]:
    """A smoothed IDF of each query term over `texts_terms` (one set of terms per candidate text).

    Terms every candidate shares do not tell candidates apart and get a small weight; never zero, since a term
    missing from a candidate is still evidence against it.
    """
    total = len(texts_terms)
    return {term: bm25.idf(total, sum(term in terms for terms in texts_terms)) + 0.1 for term in set(query_terms)}
