"""Lexical evidence shared by the ranker, the extractive generator and the citation check.

Terms and sentences come from the product's one lexical analysis (`components.text.analyzer`: Snowball stems, one
stop-word list, one sentence splitter), so the ranker, the answer and the citation check agree on what a term and a
sentence are. Here: the overlap of a question's content terms with a text, weighted by how rare each term is among
the candidates at hand (a local IDF). Cheap enough to score a few dozen chunks sentence by sentence in about a
millisecond.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from components.text import bm25
from components.text.analyzer import sentences, terms

__all__ = ["Evidence", "idf_weights", "sentence_coverage", "sentence_terms", "terms", "text_evidence"]


@lru_cache(maxsize=8192)
def sentence_terms(text: str) -> tuple[tuple[str, ...], ...]:
    """The content terms of each sentence of `text`, in order; cached, since the same chunks come back for many
    questions."""
    return tuple(tuple(terms(sentence)) for sentence in sentences(text))


def idf_weights(query_terms: Iterable[str], texts_terms: Sequence[set[str]]) -> dict[str, float]:
    """A smoothed IDF of each query term over `texts_terms` (one set of terms per candidate text).

    Terms every candidate shares do not tell candidates apart and get a small weight; never zero, since a term
    missing from a candidate is still evidence against it.
    """
    total = len(texts_terms)
    weights: dict[str, float] = {}
    for term in set(query_terms):
        df = sum(1 for text_terms in texts_terms if term in text_terms)
        weights[term] = bm25.idf(total, df) + 0.1
    return weights


@dataclass(frozen=True)
class Evidence:
    """How well one text answers a question, lexically."""

    coverage: float  # share of the question's weighted terms found in the text (0-1)
    best_sentence: float  # the best single sentence's weighted coverage, with a bonus for adjacent query bigrams
    best_sentence_index: int


def sentence_coverage(
    query_terms: Sequence[str],
    weights: dict[str, float],
    sentence_terms: Sequence[str],
    query_bigrams: set[tuple[str, str]],
) -> float:
    """Weighted share of query terms in one sentence, plus up to 0.25 for query bigrams it repeats in order."""
    total = sum(weights.get(term, 0.0) for term in set(query_terms))
    if total <= 0:
        return 0.0
    present = set(sentence_terms)
    score = sum(weights.get(term, 0.0) for term in set(query_terms) if term in present) / total
    if query_bigrams:
        bigrams = set(zip(sentence_terms, sentence_terms[1:], strict=False))
        score += 0.25 * len(query_bigrams & bigrams) / len(query_bigrams)
    return score


def text_evidence(
    query_terms: Sequence[str], weights: dict[str, float], sentences_terms: Sequence[Sequence[str]]
) -> Evidence:
    """Coverage of the question by a whole text and by its best sentence (or best pair of adjacent sentences)."""
    total = sum(weights.get(term, 0.0) for term in set(query_terms))
    if total <= 0 or not sentences_terms:
        return Evidence(0.0, 0.0, 0)
    all_terms = set().union(*[set(s) for s in sentences_terms])
    coverage = sum(weights.get(term, 0.0) for term in set(query_terms) if term in all_terms) / total
    bigrams = set(zip(query_terms, query_terms[1:], strict=False))
    best, best_index = 0.0, 0
    for index, sentence in enumerate(sentences_terms):
        score = sentence_coverage(query_terms, weights, sentence, bigrams)
        if index + 1 < len(sentences_terms):
            # An answer often spans a sentence and the next one; the pair counts a little less than one sentence.
            pair = 0.9 * sentence_coverage(
                query_terms, weights, list(sentence) + list(sentences_terms[index + 1]), bigrams
            )
            score = max(score, pair)
        if score > best:
            best, best_index = score, index
    return Evidence(coverage, best, best_index)
