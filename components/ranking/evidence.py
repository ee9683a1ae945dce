"""Lexical evidence shared by the ranker, the extractive generator and the citation check.

Pure Python, no model: tokens with a light suffix stemmer, sentence splitting, and the overlap of a question's
content terms with a text, weighted by how rare each term is among the candidates at hand (a local IDF). Cheap
enough to score a few dozen chunks sentence by sentence in about a millisecond.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from components.text import bm25
from components.text.analyzer import ABBREVIATIONS

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
# A sentence ends at . ! ? (optionally followed by a closing quote or bracket) before whitespace and a capital,
# digit or opening quote; abbreviations like "e.g." and single initials are not ends.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
    now of off on once only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up very was we were
    what when where which while who whom whose why will with would you your yours yourself yourselves
    s t don didn doesn isn wasn weren wouldn shouldn couldn many much one ones name named called kind type
    did does do done get got make made use used""".split()
)


# Longest first within a family, so "ments" is tried before "s".
_SUFFIXES = ("'s", "’s", "ies", "sses", "ness", "ments", "ment", "ings", "ing", "edly", "ed", "es", "ly", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light, deterministic suffix stemmer: plural, possessive and common verb endings."""
    if len(word) <= 3:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: len(word) - len(suffix)]
            if suffix == "ies":
                return base + "y"
            if suffix == "sses":
                return base + "ss"
            if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
                return base + "e"
            if suffix == "s" and base.endswith(("s", "u", "i")):
                return word
            return base
    return word


def words(text: str) -> list[str]:
    """Lower-cased word tokens of `text`."""
    return [token.lower() for token in _WORD.findall(text or "")]


def terms(text: str) -> list[str]:
    """Stemmed content terms of `text` (stopwords removed), in order, duplicates kept."""
    return [stem(token) for token in words(text) if token not in STOPWORDS]


@lru_cache(maxsize=8192)
def sentence_terms(text: str) -> tuple[tuple[str, ...], ...]:
    """The content terms of each sentence of `text`; cached, since the same chunks come back for many questions."""
    return tuple(tuple(terms(sentence)) for sentence in split_sentences(text))


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped; line breaks between paragraphs always end a sentence."""
    sentences: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=[-*•#]|\d+\.)", text or ""):
        block = " ".join(block.split())
        if not block:
            continue
        start = 0
        for match in _SENTENCE_END.finditer(block):
            candidate = block[start : match.start()].strip()
            last_word = candidate.rsplit(" ", 1)[-1].rstrip(".!?\"'”’)]").lower()
            if last_word in ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha()):
                continue
            if candidate:
                sentences.append(candidate)
            start = match.end()
        tail = block[start:].strip()
        if tail:
            sentences.append(tail)
    return sentences


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
