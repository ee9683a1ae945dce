"""`EvidenceScorer`: how strongly a chunk answers a question, from general retrieval signals on absolute scales.

Five signals per chunk, each on a scale that means the same for every question, so they can be added on a
candidate set (per-candidate-set normalisation loses that and ranked worse in our experiments):

- `bm25`: BM25 (k1 1.2, b 0.75) of the question's terms in the chunk's title and text, with the collection's IDF
  and average length when the store keeps term statistics (else the candidates'), divided by the best score the
  question could reach (every term at saturation), so 0-1;
- `dense`: the chunk's cosine to the question (its `semantic_relevance`);
- `sentence`: the best cosine of the question to one of the chunk's in-context sentence vectors (stored at
  ingestion); the chunk cosine when there are none;
- `coverage`: the IDF-weighted share of the question's terms the chunk holds;
- `best_sentence`: the best sentence's IDF-weighted share of the question's terms plus its sentence cosine;
  its span is kept, so the answer and the app can point at it.

Terms are the shared analyzer's (`components.text.analyzer`), the same that counted the stored chunks' terms.

Usage:
```python
scorer = EvidenceScorer()
features = scorer.score(
    "Who won Super Bowl 50?",
    [EvidenceCandidate(chunk_id="c1", text="The Broncos won Super Bowl 50.", title="Super Bowl 50", cosine=0.61)],
    statistics=store.term_statistics(terms("Who won Super Bowl 50?")),
    sentences=store.sentence_similarities(["c1"], query_embedding),
)
features[0].score, features[0].best_span
```
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from components.knowledge_base.store import TermStatistics
from components.text import bm25
from components.text.analyzer import (
    analyze,
    remember_analysis,
    sentence_terms_counts,
    sentence_terms_pieces,
    terms,
)
from components.text.language import chunk_sentence_spans

DEFAULT_WEIGHTS = {"bm25": 1.0, "dense": 0.5, "sentence": 1.0, "coverage": 0.5, "best_sentence": 0.5}


@dataclass(frozen=True)
class EvidenceCandidate:
    """What the scorer needs of a chunk: its text, its title, its cosine to the question, the sentence spans it
    carries (its metadata's `sentence_spans`, when ingestion or its source's chunker stored them) and the terms of
    those sentences ingestion stored beside them (its metadata's `sentence_terms`, `sentence_terms_record`)."""

    chunk_id: str
    text: str
    title: str = ""
    cosine: float = 0.0
    sentence_spans: tuple[tuple[int, int], ...] | None = None
    sentence_terms: str | None = None


@dataclass(frozen=True)
class EvidenceFeatures:
    """One chunk's signals, its weighted score and its best sentence's span (offsets in the chunk text)."""

    bm25: float
    dense: float
    sentence: float
    coverage: float
    best_sentence: float
    best_span: tuple[int, int] | None
    score: float
    idf: str  # "collection" or "candidates": whose statistics weighted the terms
    # The stored in-context sentences as (start, end, cosine to the question), for the answer's sentence scoring.
    sentences: tuple[tuple[int, int, float], ...] = ()

    def as_meta(self) -> dict[str, object]:
        """The features as a JSON-ready dict for `meta["evidence"]`."""
        return {
            "bm25": round(self.bm25, 4),
            "dense": round(self.dense, 4),
            "sentence": round(self.sentence, 4),
            "coverage": round(self.coverage, 4),
            "best_sentence": round(self.best_sentence, 4),
            "best_span": list(self.best_span) if self.best_span else None,
            "score": round(self.score, 4),
            "idf": self.idf,
            "sentences": [[start, end, round(cosine, 4)] for start, end, cosine in self.sentences],
        }


@lru_cache(maxsize=16384)
def _span_terms(text: str, start: int, end: int) -> frozenset[str]:
    return frozenset(terms(text[start:end]))


Spans = tuple[tuple[int, int], ...]


@lru_cache(maxsize=4096)
def _text_terms(text: str, spans: Spans) -> tuple[dict[str, int], tuple[frozenset[str], ...]]:
    """The text's term counts and each span's terms, the text read once: an ASCII text whose ordered spans cut no word
    is analysed span by span and gap by gap, its counts summed from those pieces (the analysis of each piece is the
    same words as the whole text's there, since no word crosses a cut); any other text as a whole and span by span."""
    if _cut_between_words(text, spans):
        counts: dict[str, int] = {}
        span_terms = []
        previous = 0
        for start, end in spans:
            gap = text[previous:start]
            for term in terms(gap) if gap and not gap.isspace() else ():  # mostly the space between two sentences
                counts[term] = counts.get(term, 0) + 1
            found = terms(text[start:end])
            for term in found:
                counts[term] = counts.get(term, 0) + 1
            span_terms.append(frozenset(found))
            previous = end
        for term in terms(text[previous:]):
            counts[term] = counts.get(term, 0) + 1
        # The stages after the ranker read these chunks' analyses (the citation check): kept as if made whole.
        return remember_analysis(text, counts).counts, tuple(span_terms)
    return analyze(text).counts, tuple(_span_terms(text, start, end) for start, end in spans)


def _candidate_terms(
    candidate: EvidenceCandidate, spans: Spans, query_terms: tuple[str, ...]
) -> tuple[dict[str, int], int, tuple[frozenset[str], ...]]:
    """The candidate's term counts, its length in terms and the terms of each of `spans`: read for the question's
    terms from the sentence terms ingestion stored with the chunk, when they cover every span (the stored sentence
    vectors' spans are among the chunk's sentence spans), else `_text_terms` (every term). Only the question's terms
    of the counts and of the spans' terms are read, so either serves."""
    if candidate.sentence_terms and candidate.sentence_spans is not None:
        held = _held_terms(candidate.sentence_terms, candidate.sentence_spans, query_terms)
        if held is not None and all(span in held[2] for span in spans):
            return held[0], held[1], tuple(held[2][span] for span in spans)
    counts, span_terms = _text_terms(candidate.text or "", spans)
    return counts, sum(counts.values()), span_terms


def _held_terms(
    record: str, sentence_spans: Spans, query_terms: tuple[str, ...]
) -> tuple[dict[str, int], int, dict[tuple[int, int], frozenset[str]]] | None:
    """From a chunk's stored sentence terms (`sentence_terms_record` over `sentence_spans`): how often each of
    `query_terms` occurs in the text (those it holds), how many terms the text has, and which of `query_terms` each
    sentence holds; None when the record is not one for that many sentences. The record's terms are matched whole,
    by one expression per question, without splitting the record into words."""
    pieces = sentence_terms_pieces(record, len(sentence_spans))
    if pieces is None:
        return None
    find = _query_matcher(query_terms)
    counts: dict[str, int] = {}
    by_span: dict[tuple[int, int], frozenset[str]] = {}
    for index, piece in enumerate(pieces):
        found = find(piece) if piece else ()
        for term in found:
            counts[term] = counts.get(term, 0) + 1
        if index < len(sentence_spans):
            by_span[sentence_spans[index]] = frozenset(found)
    # Terms are separated by one space within a piece: a piece of n terms holds n - 1 spaces.
    length = record.count(" ") + sum(1 for piece in pieces if piece)
    return counts, length, by_span


@lru_cache(maxsize=1024)
def _query_matcher(query_terms: tuple[str, ...]) -> Callable[[str], list[str]]:
    """`findall` of the whole terms among `query_terms` in a space-separated piece of a stored record."""
    if not query_terms:
        return lambda _piece: []
    alternatives = "|".join(re.escape(term) for term in sorted(query_terms, key=len, reverse=True))
    return re.compile(rf"(?<![^ ])(?:{alternatives})(?![^ ])").findall


def remember_stored_analysis(text: str, record: object, sentence_spans: Spans | None) -> None:
    """Keep the whole text's term counts from its stored sentence terms as the analyzer's analysis of `text`, so that
    the stages after the ranker (the citation check) find the ranked chunks analysed, as when the ranker analysed
    them; nothing when there is no such record for these sentences."""
    if sentence_spans is None:
        return
    counts = sentence_terms_counts(record, len(sentence_spans))
    if counts is not None:
        remember_analysis(text, counts)


def _cut_between_words(text: str, spans: Spans) -> bool:
    """Whether `text` is ASCII and `spans` are ordered, within it and never cut inside a word (letters and digits)."""
    if not text.isascii():
        return False  # lower-casing may change a non-ASCII text's length, and with it where a piece's words are
    previous = 0
    for start, end in spans:
        if not previous <= start <= end <= len(text):
            return False
        for cut in (start, end):
            if 0 < cut < len(text) and text[cut - 1].isalnum() and text[cut].isalnum():
                return False
        previous = end
    return True


@lru_cache(maxsize=4096)
def _title_counts(title: str) -> dict[str, int]:
    return analyze(title).counts if title else {}


@lru_cache(maxsize=4096)
def _title_length(title: str) -> int:
    return sum(_title_counts(title).values())


class EvidenceScorer:
    """Scores candidate chunks for a question by the weighted sum of the five evidence signals."""

    def __init__(self, weights: dict[str, float] | None = None, k1: float = bm25.K1, b: float = bm25.B) -> None:
        """
        :param weights: weight per signal (`bm25`, `dense`, `sentence`, `coverage`, `best_sentence`); missing ones
            take the defaults (1, 0.5, 1, 0.5, 0.5).
        :param k1: BM25 term-frequency saturation (> 0).
        :param b: BM25 length normalisation (0-1).
        """
        merged = dict(DEFAULT_WEIGHTS)
        for key, value in (weights or {}).items():
            if key not in DEFAULT_WEIGHTS:
                raise ValueError(f"unknown evidence weight {key!r}; use {', '.join(DEFAULT_WEIGHTS)}")
            if value < 0:
                raise ValueError(f"evidence weight {key!r} must not be negative")
            merged[key] = float(value)
        if k1 <= 0 or not 0 <= b <= 1:
            raise ValueError("k1 must be positive and b between 0 and 1")
        self.weights = merged
        self.k1 = float(k1)
        self.b = float(b)

    def score(
        self,
        query: str,
        candidates: Sequence[EvidenceCandidate],
        statistics: TermStatistics | None = None,
        sentences: dict[str, list[tuple[int, int, float]]] | None = None,
    ) -> list[EvidenceFeatures]:
        """The features of each candidate, in the candidates' order.

        :param query: the question.
        :param candidates: the chunks to score.
        :param statistics: the collection's term statistics for the question's terms; None to use the candidates'.
        :param sentences: per chunk id, `(start, end, cosine)` of its stored in-context sentences.
        :returns: one `EvidenceFeatures` per candidate.
        """
        sentences = sentences or {}
        query_terms = sorted(set(terms(query)))
        # Each candidate's sentences: its stored in-context ones, else those it carries, else the splitter's.
        read: list[Spans] = []
        for candidate in candidates:
            stored = sentences.get(candidate.chunk_id)
            if stored:
                read.append(tuple((start, end) for start, end, _ in stored))
            elif candidate.sentence_spans is not None:
                read.append(tuple(candidate.sentence_spans))
            else:
                read.append(tuple(chunk_sentence_spans(candidate.text)))
        asked = tuple(query_terms)
        analyses = [
            _candidate_terms(candidate, spans, asked) for candidate, spans in zip(candidates, read, strict=True)
        ]
        counts = [self._counts(candidate, found[0]) for candidate, found in zip(candidates, analyses, strict=True)]
        # Each candidate's length in terms, its title's included as in its counts.
        lengths = [
            found[1] + _title_length(candidate.title or "")
            for candidate, found in zip(candidates, analyses, strict=True)
        ]
        idf, average, source = self._idf(query_terms, counts, lengths, statistics)
        known = [term for term in query_terms if term in idf]
        total_idf = sum(idf[term] for term in known)
        best_possible = total_idf * (self.k1 + 1.0)

        features = []
        for candidate, count, length, (_, _, span_terms) in zip(candidates, counts, lengths, analyses, strict=True):
            found = [term for term in known if count.get(term)]
            held = sum(idf[term] for term in found)
            keyword = sum(idf[term] * bm25.term_weight(count[term], length, average, self.k1, self.b) for term in found)
            keyword = keyword / best_possible if best_possible > 0 else 0.0
            coverage = held / total_idf if total_idf > 0 else 0.0
            dense = min(1.0, max(0.0, float(candidate.cosine)))
            stored = sentences.get(candidate.chunk_id)
            if stored:
                rows = [
                    (start, end, cosine, held_terms)
                    for (start, end, cosine), held_terms in zip(stored, span_terms, strict=True)
                ]
                sentence = max(cosine for _, _, cosine, _ in rows)
            else:
                # No stored sentence vectors (another source, or an older ingestion): the chunk's cosine stands in,
                # for the sentences it carries, else the splitter's (`read` above).
                spans = read[len(features)]
                rows = [
                    (start, end, dense, held_terms) for (start, end), held_terms in zip(spans, span_terms, strict=True)
                ]
                sentence = dense
            # A text without sentences (a table cell, a title) is its own best sentence.
            best_sentence = -math.inf if rows else coverage + dense
            best_span: tuple[int, int] | None = None
            for start, end, cosine, sentence_terms in rows:
                share = sum(idf[term] for term in known if term in sentence_terms) / total_idf if total_idf else 0.0
                if share + cosine > best_sentence:
                    best_sentence, best_span = share + cosine, (start, end)
            weights = self.weights
            score = (
                weights["bm25"] * keyword
                + weights["dense"] * dense
                + weights["sentence"] * sentence
                + weights["coverage"] * coverage
                + weights["best_sentence"] * best_sentence
            )
            kept = tuple((start, end, float(cosine)) for start, end, cosine in stored) if stored else ()
            features.append(
                EvidenceFeatures(keyword, dense, sentence, coverage, best_sentence, best_span, score, source, kept)
            )
        return features

    @staticmethod
    def _counts(candidate: EvidenceCandidate, text_counts: dict[str, int]) -> dict[str, int]:
        title_counts = _title_counts(candidate.title or "")
        if not title_counts:
            return text_counts
        counts = dict(text_counts)  # Counter's `+` costs about 40 µs a chunk; the counts are all positive anyway
        for term, count in title_counts.items():
            counts[term] = counts.get(term, 0) + count
        return counts

    @staticmethod
    def _idf(
        query_terms: list[str],
        counts: list[dict[str, int]],
        lengths: list[int],
        statistics: TermStatistics | None,
    ) -> tuple[dict[str, float], float, str]:
        """IDF of the question's terms (terms nobody holds are left out: they cannot tell chunks apart), the
        average chunk length and which statistics they came from."""
        if statistics is not None and statistics.n_chunks > 0:
            total, average, source = statistics.n_chunks, statistics.avg_terms, "collection"
            frequencies = {term: statistics.df.get(term, 0) for term in query_terms}
        else:
            total = len(counts)
            average = sum(lengths) / total if total else 0.0
            source = "candidates"
            frequencies = {term: sum(1 for count in counts if term in count) for term in query_terms}
        # A df above the (briefly cached) chunk count is a write that landed meanwhile: count it as in every chunk.
        idf = {term: bm25.idf(total, min(df, total)) for term, df in frequencies.items() if df > 0}
        return idf, average, source
