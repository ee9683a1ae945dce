"""`ExtractiveAnswerGenerator`: an offline, cited answer made of the sources' own best sentences."""

from __future__ import annotations

from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict, logging

from components.ranking.evidence import idf_weights, sentence_coverage, sentence_terms, terms
from components.text.analyzer import sentences as split_sentences

logger = logging.getLogger(__name__)

# Sentences scoring under this share of the best one are left out.
RELATIVE_CUTOFF = 0.5
# The ranker's best sentence of a chunk (`meta["evidence"]["best_span"]`: its terms and its in-context meaning
# matched the question best) is preferred by this much, and needs only half the usual term support.
BEST_SPAN_BONUS = 0.2
NO_SOURCES_ANSWER = "No source returned anything for this question, so there is nothing to answer from."
NO_EVIDENCE_ANSWER = "The sources found do not answer this question directly; the closest passages are listed below."


@component
class ExtractiveAnswerGenerator:
    """Answers with the sentences of the top chunks that best cover the question, each citing its chunk as [n].

    Deterministic and model-free: a sentence's score is the share of the question's (locally rare) terms it
    holds, plus a little for adjacent question bigrams and for its chunk's rank, plus a bonus when the ranker
    marked it as its chunk's best sentence (`meta["evidence"]["best_span"]`). `n` is the chunk's 1-based
    position in `documents`, the same numbering the prompt uses. When no sentence reaches `min_support` the
    answer says plainly that the evidence does not answer the question.

    Usage:
    ```python
    generator = ExtractiveAnswerGenerator(max_sentences=2)
    generator.run(query="Who won Super Bowl 50?", documents=ranked)["replies"][0]
    # 'The Denver Broncos defeated the Carolina Panthers 24-10 to win Super Bowl 50 [1].'
    ```
    """

    def __init__(self, max_sentences: int = 3, max_chunks: int = 5, min_support: float = 0.25) -> None:
        """
        :param max_sentences: the most sentences an answer holds (1-10).
        :param max_chunks: how many of the top chunks sentences are taken from (1-20).
        :param min_support: the share of the question's weighted terms a sentence must hold to be used (0-1).
        """
        if not 1 <= max_sentences <= 10:
            raise ValueError("max_sentences must be between 1 and 10")
        if not 1 <= max_chunks <= 20:
            raise ValueError("max_chunks must be between 1 and 20")
        if not 0.0 <= min_support <= 1.0:
            raise ValueError("min_support must be between 0 and 1")
        self.max_sentences = max_sentences
        self.max_chunks = max_chunks
        self.min_support = min_support

    @component.output_types(replies=list[str])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """Compose the answer.

        :param query: the question.
        :param documents: the ranked chunks, numbered [1]..[n] in this order.
        :returns: `replies`: one answer string whose sentences cite their chunks.
        """
        if not documents:
            return {"replies": [NO_SOURCES_ANSWER]}
        query_terms = terms(query)
        top = documents[: self.max_chunks]
        sentences_per_doc = [split_sentences(document.content or "") for document in top]
        terms_per_doc = [sentence_terms(document.content or "") for document in top]
        weights = idf_weights(query_terms, [set().union(*map(set, doc)) if doc else set() for doc in terms_per_doc])
        bigrams = set(zip(query_terms, query_terms[1:], strict=False))

        scored: list[tuple[float, int, int, str]] = []
        for doc_index, (sentences, bags) in enumerate(zip(sentences_per_doc, terms_per_doc, strict=True)):
            rank_bonus = 0.1 / (1 + doc_index)
            best_text = _best_span_text(top[doc_index])
            for sentence_index, (sentence, bag) in enumerate(zip(sentences, bags, strict=True)):
                support = sentence_coverage(query_terms, weights, bag, bigrams)
                best = bool(best_text) and _same_sentence(sentence, best_text)
                floor = self.min_support / 2 if best else self.min_support
                if support >= floor and len(bag) >= 2:
                    bonus = rank_bonus + (BEST_SPAN_BONUS if best else 0.0)
                    scored.append((support + bonus, doc_index, sentence_index, sentence))
        if not scored:
            return {"replies": [NO_EVIDENCE_ANSWER]}

        # Best first; ties go to the higher-ranked chunk and the earlier sentence, so the answer is deterministic.
        scored.sort(key=lambda item: (-item[0], item[1], item[2]))
        chosen: list[tuple[int, int, str]] = []
        seen: set[str] = set()
        best = scored[0][0]
        for score, doc_index, sentence_index, sentence in scored:
            if score < RELATIVE_CUTOFF * best:
                break  # a much weaker sentence dilutes the answer more than it adds
            key = " ".join(terms(sentence))
            if key in seen:
                continue
            seen.add(key)
            chosen.append((doc_index, sentence_index, sentence))
            if len(chosen) >= self.max_sentences:
                break
        parts = [_cite(sentence, doc_index + 1) for doc_index, _, sentence in chosen]
        return {"replies": [" ".join(parts)]}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self, max_sentences=self.max_sentences, max_chunks=self.max_chunks, min_support=self.min_support
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExtractiveAnswerGenerator:
        return default_from_dict(cls, data)


def _best_span_text(document: Document) -> str:
    """The ranker's best sentence of `document`, whitespace-normalised; empty when it marked none."""
    evidence = (document.meta or {}).get("evidence") or {}
    span = evidence.get("best_span") if isinstance(evidence, dict) else None
    content = document.content or ""
    if not (isinstance(span, (list, tuple)) and len(span) == 2):
        return ""
    start, end = int(span[0]), int(span[1])
    if not 0 <= start < end <= len(content):
        return ""
    return " ".join(content[start:end].split())


def _same_sentence(sentence: str, best_text: str) -> bool:
    """Whether a split sentence is the marked one (the two splitters may cut an abbreviation differently)."""
    normalised = " ".join(sentence.split())
    return normalised == best_text or (len(normalised) >= 20 and (normalised in best_text or best_text in normalised))


def _cite(sentence: str, number: int) -> str:
    """The sentence with its citation before the final stop: `... [n].`."""
    text = sentence.strip()
    if text.endswith("."):
        return f"{text[:-1].rstrip()} [{number}]."
    return f"{text} [{number}]"
