"""The sentences an offline answer may cite, and how much of a question part each holds.

Every whole, distinct sentence of the top chunks is a candidate (`candidate_sentences`), with its terms, its chunk's
title, the sentence before it (what an opening "it" refers to) and its in-context cosine to the question (stored at
ingestion; else its chunk's relevance, discounted). A chunk that opens inside a sentence borrows it whole from its
neighbouring chunk, a sentence two chunks share is listed once, and a heading line is no sentence to cite. A
sentence's share of a part (`share_of`) weighs each of the part's terms by its IDF over the candidates, the other
parts' terms at OTHER_PART_WEIGHT and the names the question is about at ANCHOR_WEIGHT times (`part_weights`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from haystack import Document

from components.generation.question_analysis import QuestionPart
from components.text import bm25
from components.text.analyzer import terms
from components.text.language import chunk_sentence_spans, chunk_sentences

# A sentence's score is a weighted sum of named features whose weights are fitted (`answer_scoring`: `research fit
# scoring`); what follows are the term weights inside its share of a part's terms (`share_of`).
# Terms of the question's other parts ("... and who develops it?" is about the first part's subject) count half.
OTHER_PART_WEIGHT = 0.5
# The names the question is about weigh this many times their IDF: a sentence about another subject is wrong
# however many of the other words it shares ("first released" in a sentence about another library).
ANCHOR_WEIGHT = 2.0
# A term found only in the chunk's title (the subject a sentence's "it" refers to) counts this much.
TITLE_WEIGHT = 0.5
# Without a stored sentence vector a sentence takes its chunk's relevance, slightly discounted.
UNSTORED_COSINE_FACTOR = 0.8
_LOWER_START = re.compile(r"^(?:[\"'(\[]?[a-z]|[,;:)\]])")
_PRONOUN_START = re.compile(r"^(?:it|its|he|his|she|her|they|their|this|these|the company|the project)\b", re.I)
# The start of a text that opens on a blank line (a paragraph break).
_BLANK_LINE = re.compile(r"[ \t]*\n[ \t]*\n")
# A sentence's closing punctuation (or a colon or semicolon opening what follows, or an ellipsis), perhaps followed by
# closing quotes and brackets and by reference marks ("in 2015.[4]").
_CLOSING = re.compile(r"[.!?:;\u2026][\"'\u201d\u2019)\]]*(?:\s*\[\w{1,4}\])*$")


@dataclass
class Sentence:
    """One candidate sentence of the answer, whole, with the chunk ([n]) it is cited from."""

    text: str
    number: int  # 1-based position of the cited chunk in `documents`
    rank: int  # 0-based position of that chunk
    cosine: float
    terms: frozenset[str]
    title_terms: frozenset[str]  # the chunk's title, and the sentence before when this one opens with a pronoun
    stored: bool  # the cosine is the sentence's own (a stored in-context vector), not its chunk's
    heading: frozenset[str] = frozenset()  # the chunk's title alone
    before: frozenset[str] = frozenset()  # the sentence before it in its chunk
    before_text: str = ""  # that sentence's text


def part_weights(
    part: QuestionPart,
    parts: list[QuestionPart],
    document_frequency: dict[str, int],
    total: int,
    anchors: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """IDF weights (over the candidate sentences) of the part's terms, the other parts' terms at half weight, the
    names the question is about at ANCHOR_WEIGHT times."""
    weights: dict[str, float] = {}
    for other in parts:
        factor = 1.0 if other is part else OTHER_PART_WEIGHT
        for term in other.terms:
            idf = bm25.idf(total, document_frequency.get(term, 0)) + 0.1
            weight = factor * idf * (ANCHOR_WEIGHT if term in anchors else 1.0)
            weights[term] = max(weights.get(term, 0.0), weight)
    return weights


def share_of(weights: dict[str, float], candidate: Sentence) -> float:
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    held = sum(
        weight if term in candidate.terms else TITLE_WEIGHT * weight
        for term, weight in weights.items()
        if term in candidate.terms or term in candidate.title_terms
    )
    return held / total


@lru_cache(maxsize=16384)
def terms_of(text: str) -> frozenset[str]:
    return frozenset(terms(text))


def candidate_sentences(documents: list[Document], max_chunks: int) -> list[Sentence]:
    """The whole, distinct sentences of the top chunks, in rank order, each with its cosine to the question."""
    seen: set[str] = set()
    found: list[Sentence] = []
    for rank, document in enumerate(documents[:max_chunks]):
        content = document.content or ""
        meta = document.meta or {}
        title_terms = terms_of(str(meta.get("source_title") or ""))
        evidence = meta.get("evidence") if isinstance(meta.get("evidence"), dict) else {}
        stored = [row for row in (evidence.get("sentences") or []) if len(row) == 3]
        relevance = float(meta.get("semantic_relevance") or 0.0) * UNSTORED_COSINE_FACTOR
        rows = (
            [(int(start), int(end), float(cosine)) for start, end, cosine in stored]
            if stored
            else [(start, end, relevance) for start, end in chunk_sentence_spans(content, meta)]
        )
        rows.sort()
        previous_terms: frozenset[str] = frozenset()
        previous_text = ""
        for position, (start, end, cosine) in enumerate(rows):
            if not 0 <= start < end <= len(content):
                continue
            text = " ".join(content[start:end].split())
            number, cited_rank = rank + 1, rank
            # A chunk after the first that opens in lower case (or on a comma) opens inside a sentence its neighbour
            # holds whole.
            if position == 0 and int(meta.get("chunk_index") or 0) > 0 and _LOWER_START.match(text):
                whole = _from_neighbour(text, document, documents)
                if whole is None:
                    continue  # a fragment cut at the chunk boundary; its whole sentence is in a chunk not at hand
                text, number, cited_rank = whole
            # "It stands on ...": a sentence opening with a pronoun is about what the sentence before it named.
            context = title_terms | previous_terms if _PRONOUN_START.match(text) else title_terms
            before, previous_terms = previous_terms, terms_of(text)
            before_text, previous_text = previous_text, text
            key = text.lower()
            if key in seen or len(previous_terms) < 2 or _heading_line(content, start, end):
                continue
            seen.add(key)
            found.append(
                Sentence(
                    text,
                    number,
                    min(rank, cited_rank),
                    cosine,
                    previous_terms,
                    context,
                    bool(stored),
                    title_terms,
                    before,
                    before_text,
                )
            )
    return found


def _heading_line(content: str, start: int, end: int) -> bool:
    """Whether `content[start:end]` is a heading ("The move to Cornell", a title line): a line of its own without a
    sentence's closing punctuation, before a line of prose: one that opens on a word (not a formula's line break,
    "O" | "2 in which") and closes as a sentence does (not the next item of a list written without full stops,
    each item a statement of its own). A title standing over a section's heading, each a paragraph of its own
    ("Guide" | blank line | "Getting started" | blank line | prose), is a heading too. It states nothing to cite; its
    words still tell what a following "it" names."""
    before, after = content[:start].rstrip(" \t"), content[end:].lstrip(" \t")
    opens_line = not before or before.endswith("\n")
    if not opens_line or not after.startswith("\n") or _CLOSING.search(content[start:end].rstrip()):
        return False
    while True:
        line, newline, rest = after.lstrip().partition("\n")
        line = line.rstrip()
        if not line[:1].isalpha():
            return False
        if _CLOSING.search(line):
            return True
        # Another line without a close: a heading under this one only when each is a paragraph of its own.
        if not (newline and _BLANK_LINE.match(after) and _BLANK_LINE.match("\n" + rest)):
            return False
        after = "\n" + rest


def _from_neighbour(fragment: str, document: Document, documents: list[Document]) -> tuple[str, int, int] | None:
    """The whole sentence ending with `fragment`, from the previous chunk of the same document when it is listed:
    (text, its citation number, its rank)."""
    meta = document.meta or {}
    owner = meta.get("document_id") or meta.get("source_id")
    if owner is None:
        return None  # chunks of no named document are no one's neighbours
    index = int(meta.get("chunk_index") or 0)
    for rank, other in enumerate(documents):
        other_meta = other.meta or {}
        if (other_meta.get("document_id") or other_meta.get("source_id")) != owner:
            continue
        if other_meta.get("chunk_index") is None or int(other_meta["chunk_index"]) != index - 1:
            continue
        for text in chunk_sentences(other.content or "", other_meta):
            if text.endswith(fragment) and len(text) > len(fragment):
                return text, rank + 1, rank
    return None
