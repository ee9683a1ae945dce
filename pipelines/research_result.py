"""`ResearchResult`: what one research question returns, to the CLI, the Streamlit app and the HTTP server alike."""

from __future__ import annotations

from typing import Any

from haystack import Document, logging
from pydantic import BaseModel, Field, ValidationError

from components.contracts import ContextChunk, SourceStatus, document_to_chunk
from components.generation.cited_answer_builder import cited_numbers, renumber_citations

logger = logging.getLogger(__name__)


class Citation(BaseModel):
    """One [n] of the answer and the chunk it names."""

    number: int = Field(ge=1)
    chunk_id: str
    source_type: str | None = None
    source_id: str | None = None
    source_title: str = ""
    source_url: str | None = None


class SentenceCheck(BaseModel):
    """Whether one answer sentence is supported by the chunks it cites."""

    text: str
    citations: list[int] = Field(default_factory=list)
    supported: bool
    support_score: float = Field(ge=0.0, le=1.0)
    abstains: bool = False  # the product's own "the sources do not answer": no claim, so nothing to support


class AnswerPart(BaseModel):
    """One part of the question: its short answer, how likely that is right, and whether it is shown (`sure`)."""

    question: str
    short_answer: str = ""
    # None: it has no short answer, or its span was held back (it answers a description of the question, not the
    # question, and is never shown)
    short_answer_confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    sure: bool = False


class ResearchResult(BaseModel):
    """The cited answer to a question with its evidence, every source's status and where the time went.

    `chunks` are numbered in order: `chunks[0]` is source [1]. Each chunk's `ranks` holds its rank in every
    branch that found it, after fusion (`fused`) and after ranking (`ranked`).
    """

    question: str
    answer: str
    # The name, date, number or place the question asks for, as it opens the answer (empty when there is none).
    short_answer: str = ""
    # How likely the short answer shown is right (of the best part's when none is shown); None without an answer.
    short_answer_confidence: float | None = None
    parts: list[AnswerPart] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    chunks: list[ContextChunk] = Field(default_factory=list)
    statuses: list[SourceStatus] = Field(default_factory=list)
    sentences: list[SentenceCheck] = Field(default_factory=list)
    invalid_citations: list[int] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    source_selection: dict[str, Any] | None = None  # with sources=["auto"]: the chosen sources and the reasons
    # A follow-up's question as typed, and the rewrite that was searched and answered ("" when it stood alone).
    asked: str = ""
    answered_as: str = ""
    # Values the evidence gives differently for the same attribute: [{"attribute", "subject", "values": [{"value",
    # "citations", "document_dates"}]}], numbered like `chunks`.
    conflicts: list[dict[str, Any]] = Field(default_factory=list)

    def status_of(self, source: str) -> SourceStatus | None:
        """The status of one source, if it reported."""
        return next((status for status in self.statuses if status.source == source), None)

    @classmethod
    def from_outputs(cls, question: str, outputs: dict[str, Any]) -> ResearchResult:
        """Build the result from the `research` pipeline's named outputs.

        A chunk that is not a valid `ContextChunk` is left out, and the answer, citations and sentence checks are
        renumbered with it, so [n] always names `chunks[n - 1]`; what cited the left-out chunk loses that citation
        (its number goes to `invalid_citations`).
        """
        documents = list(outputs.get("chunks") or [])
        chunks: list[ContextChunk] = []
        numbers: dict[int, int] = {}  # the number the answer was written with -> the number in `chunks`
        for number, document in enumerate(documents, start=1):
            chunk = _chunk(document)
            if chunk is not None:
                chunks.append(chunk)
                numbers[number] = len(chunks)
        answer = outputs.get("answer") or ""
        citations = [Citation.model_validate(item) for item in outputs.get("citations") or []]
        sentences = [SentenceCheck.model_validate(item) for item in outputs.get("sentences") or []]
        invalid = list(outputs.get("invalid_citations") or [])
        conflicts = [dict(conflict) for conflict in outputs.get("conflicts") or []]
        if len(chunks) < len(documents):
            conflicts = _renumbered_conflicts(conflicts, numbers)
            invalid += [number for number in cited_numbers(answer) if number not in numbers and number not in invalid]
            answer = renumber_citations(answer, numbers)
            citations = [
                citation.model_copy(update={"number": numbers[citation.number]})
                for citation in citations
                if citation.number in numbers
            ]
            sentences = [_renumbered(sentence, numbers) for sentence in sentences]
        return cls(
            question=question,
            answer=answer,
            short_answer=outputs.get("short_answer") or "",
            short_answer_confidence=outputs.get("short_answer_confidence"),
            parts=[AnswerPart.model_validate(part) for part in outputs.get("parts") or []],
            citations=citations,
            chunks=chunks,
            statuses=list(outputs.get("statuses") or []),
            sentences=sentences,
            invalid_citations=invalid,
            timings=dict(outputs.get("timings") or {}),
            conflicts=conflicts,
        )


def _renumbered_conflicts(conflicts: list[dict[str, Any]], numbers: dict[int, int]) -> list[dict[str, Any]]:
    """Conflicts with their citations renumbered; a side left citing nothing, and a conflict left with one side,
    are dropped."""
    kept = []
    for conflict in conflicts:
        values = []
        for side in conflict.get("values") or []:
            cited = [numbers[number] for number in side.get("citations") or [] if number in numbers]
            if cited:
                values.append({**side, "citations": cited})
        if len(values) > 1:
            kept.append({**conflict, "values": values})
    return kept


def _renumbered(sentence: SentenceCheck, numbers: dict[int, int]) -> SentenceCheck:
    """A sentence check with its citations renumbered; a sentence left citing nothing is not supported."""
    cited = [numbers[number] for number in sentence.citations if number in numbers]
    return sentence.model_copy(
        update={
            "text": renumber_citations(sentence.text, numbers),
            "citations": cited,
            "supported": sentence.supported and bool(cited),
        }
    )


def _chunk(document: Document) -> ContextChunk | None:
    try:
        return document_to_chunk(document)
    except ValidationError as exc:
        # One malformed chunk from one source must not cost the analyst the whole answer.
        logger.warning(
            "Dropping a chunk that is not a valid ContextChunk: {chunk_id}: {problem}",
            chunk_id=document.id,
            problem=str(exc).splitlines()[0],
        )
        return None
