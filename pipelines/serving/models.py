"""The typed request and response models of the served pipelines (they make the OpenAPI page and MCP schemas).

The research pipeline answers with `pipelines.research_result.ResearchResult` itself; the models here cover
filters, the document list and lookup, and ingestion, plus the text the chat endpoint answers with.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from components.contracts import ContextChunk, SourceStatus, document_to_chunk, shown_metadata
from components.generation.conflict_finder import disagreement_sentence


class ResearchFilters(BaseModel):
    """Restrictions on knowledge-base documents; every field is optional."""

    doc_types: list[str] | None = Field(
        default=None, description="Document types to keep: txt, md, html, pdf, web, arxiv."
    )
    date_from: dt.date | None = Field(default=None, description="Keep documents dated on or after this day.")
    date_to: dt.date | None = Field(default=None, description="Keep documents dated on or before this day.")
    document_ids: list[str] | None = Field(default=None, description="Keep only these documents.")

    def to_catalog(self) -> dict[str, Any] | None:
        """The filters as the pipeline takes them (ISO dates), or None when nothing is restricted."""
        values = self.model_dump(mode="json", exclude_none=True)
        return {key: value for key, value in values.items() if value not in ([], "")} or None


class DocumentSummaryOut(BaseModel):
    """One document of the knowledge base."""

    document_id: str
    title: str
    source: str = Field(description="The path, URL or id it was ingested from.")
    doc_type: str
    url: str | None = None
    date: dt.date | None = None
    ingested_at: dt.datetime | None = None
    chunk_count: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class DocumentPage(BaseModel):
    """A page of the document list and how many documents match in all."""

    documents: list[DocumentSummaryOut]
    total: int
    limit: int
    offset: int


class ChunkOut(BaseModel):
    """One chunk of a document, in order."""

    chunk_id: str
    chunk_index: int
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class DocumentDetail(BaseModel):
    """A document with its chunks in order."""

    document: DocumentSummaryOut
    chunks: list[ChunkOut]


class IngestResult(BaseModel):
    """What ingesting one URL or text did."""

    source: str
    outcome: str = Field(description="added, replaced, unchanged or failed")
    document_id: str | None = None
    chunks_written: int = 0
    seconds: float = 0.0
    message: str = ""


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    if isinstance(value, BaseModel):
        return value.model_dump()
    return value


def summary_from(value: Any) -> DocumentSummaryOut:
    """A `DocumentSummaryOut` from the store's `DocumentSummary`/`DocumentRecord` or an equivalent dict."""
    data = _plain(value)
    if isinstance(data, dict) and "document" in data:
        count = data.get("chunk_count")
        data = dict(_plain(data["document"]), chunk_count=count)
    data = dict(data)
    data.setdefault("title", data.get("document_title") or data.get("document_id", ""))
    data.setdefault("source", data.get("url") or data.get("document_id", ""))
    data.setdefault("doc_type", "txt")
    data.pop("text", None)
    data.pop("content_hash", None)
    return DocumentSummaryOut.model_validate({k: v for k, v in data.items() if k in DocumentSummaryOut.model_fields})


def chunk_from(value: Any) -> ChunkOut:
    """A `ChunkOut` from the store's `ChunkRecord`, a Haystack `Document` or an equivalent dict."""
    if hasattr(value, "content") and hasattr(value, "meta"):
        meta = shown_metadata(value.meta)
        return ChunkOut(
            chunk_id=str(value.id), chunk_index=int(meta.get("chunk_index", 0)), text=value.content or "", metadata=meta
        )
    data = dict(_plain(value))
    data.pop("embedding", None)
    return ChunkOut(
        chunk_id=str(data.get("chunk_id") or data.get("id")),
        chunk_index=int(data.get("chunk_index", 0)),
        text=str(data.get("text") or data.get("content") or ""),
        metadata={k: v for k, v in shown_metadata(data.get("metadata")).items() if k != "embedding"},
    )


def last_user_message(messages: list[dict]) -> str | None:
    """The text of the last user message of an OpenAI-style chat (string or content parts)."""
    for message in reversed(messages or []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        text = str(content or "").strip()
        if text:
            return text
    return None


def confidence_note(result: Any) -> str | None:
    """One line on how sure the short answer is (None when the answer has no confidence): "Short answer: sure
    (confidence 87%)." or "Short answer: not sure (confidence 31%), so none is given."."""
    confidence = getattr(result, "short_answer_confidence", None)
    if confidence is None:
        return None
    if result.short_answer:
        return f"Short answer: sure (confidence {confidence:.0%})."
    return f"Short answer: not sure (confidence {confidence:.0%}), so none is given."


_ANSWERED_AS = re.compile(r"\(Answered as: (.+?)\)\s*")


def earlier_turns(messages: list[dict]) -> list[dict]:
    """The chat's turns before its last user message, oldest first: each user question with the assistant's reply
    that followed it (the context a follow-up question is rewritten against)."""
    texts = []
    for message in messages or []:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        texts.append((message["role"], str(content or "").strip()))
    while texts and texts[-1][0] != "user":
        texts.pop()
    texts = texts[:-1]  # the question being asked
    turns: list[dict] = []
    for role, text in texts:
        if role == "user" and text:
            turns.append({"question": text, "answer": ""})
        elif role == "assistant" and turns and not turns[-1]["answer"]:
            rewritten = _ANSWERED_AS.match(text)
            if rewritten:  # the question that was answered, so that a chain of follow-ups keeps its subject
                turns[-1]["question"] = rewritten.group(1)
                text = text[rewritten.end() :]
            turns[-1]["answer"] = text.split("\n\nSources", 1)[0].strip()
    return turns


def answered_as_line(answered_as: str) -> str:
    """The line a chat reply opens with when the question was rewritten as a follow-up ("" when it was not)."""
    return f"(Answered as: {answered_as})\n\n" if answered_as else ""


def format_chat_answer(result: Any, include_answer: bool = True) -> str:
    """The chat reply: the cited answer, then the numbered sources it cites (title and link).

    With `include_answer=False` (the answer was streamed as the generator wrote it, before the rewrite line and the
    disagreements were known to the stream) the reply is what follows the streamed answer: its conflicts, then the
    rest."""
    lines: list[str] = []
    if include_answer:
        lines.append(answered_as_line(getattr(result, "answered_as", "")))
        lines.append(result.answer.strip() or "The sources do not answer this question.")
    else:
        lines.extend(f" {disagreement_sentence(conflict)}" for conflict in getattr(result, "conflicts", None) or [])
    if (note := confidence_note(result)) is not None:
        lines.append(f"\n\n{note}")
    cited = {citation.number for citation in result.citations}
    sources = []
    for number, chunk in enumerate(result.chunks, start=1):
        if cited and number not in cited:
            continue
        title = chunk.source_title or chunk.source_id
        link = f" ({chunk.source_url})" if chunk.source_url else ""
        sources.append(f"[{number}] {title}{link}")
    if sources:
        lines.append("\n\nSources:\n" + "\n".join(sources))
    failed = [status for status in result.statuses if status.status.value in ("error", "timeout")]
    if failed:
        lines.append("\n\n(" + "; ".join(f"{status.source}: {status.message}" for status in failed) + ")")
    return "".join(lines)


class GraphFactsResponse(BaseModel):
    """Facts of the knowledge graph about one entity, as chunks with attribution, and the run's status."""

    entity: str = Field(description="The entity name asked about.")
    facts: list[ContextChunk] = Field(description="The facts as chunks (source_type graph), in the tool's order.")
    status: SourceStatus = Field(description="How the graph search went (an error status says what was wrong).")


class TimelineResponse(GraphFactsResponse):
    """An entity's dated facts, oldest first."""

    entities: list[str] = Field(default_factory=list, description="The entity names the name matched.")
    timeline: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Tool-contract entries: fact, uuid, valid_at, invalid_at, confidence, attribution.",
    )
    less_certain: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Facts below the event-confidence threshold, in the same shape: listed, not drawn as events.",
    )


class RelationshipsResponse(GraphFactsResponse):
    """How an entity connects to others."""

    relationships: dict[str, Any] = Field(
        default_factory=dict, description="central_entity, related_facts, search_method and depth."
    )


class EntityMatchOut(BaseModel):
    """One entity an entity search found: who it is, what the graph holds on it, and how it matched."""

    uuid: str = Field(description="The entity's id in the knowledge graph.")
    name: str
    type: str = Field(description="person, organization, place, product, event or other.")
    aliases: list[str] = Field(default_factory=list, description="Other names it goes by (normalised).")
    fact_count: int = Field(ge=0, description="How many facts mention it (valid on as_of, when given).")
    first_fact_date: str | None = Field(default=None, description="The date of its earliest dated fact (ISO).")
    last_fact_date: str | None = Field(default=None, description="The date of its latest dated fact (ISO).")
    score: float = Field(ge=0.0, le=1.0, description="How well it matches the query, 0-1.")
    match: Literal["exact", "alias", "prefix", "contains", "within", "mention", "fuzzy"] = Field(
        description=(
            "exact: its name; alias: one of its aliases; prefix: a name starting with the query; contains: a name "
            "holding every word of the query; within: a shorter name inside a query that is itself a name; "
            "mention: a name the query text holds; fuzzy: a name spelt nearly alike."
        )
    )
    matched: str = Field(default="", description="The (normalised) name or alias that matched.")


class EntitySearchResponse(BaseModel):
    """The entities of the knowledge graph a name or text matches, best first, and the best facts of the top ones."""

    query: str = Field(description="The name or text searched for.")
    entities: list[EntityMatchOut] = Field(default_factory=list, description="The matching entities, best first.")
    facts: list[ContextChunk] = Field(
        default_factory=list,
        description="The best facts of the top entities as chunks (source_type graph), with their sources.",
    )
    status: SourceStatus = Field(description="How the search went (an error status says what was wrong).")


def facts_from(documents: list[Any] | None) -> list[ContextChunk]:
    """The graph tool's Documents as `ContextChunk`s (malformed ones dropped)."""
    from pydantic import ValidationError

    chunks: list[ContextChunk] = []
    for document in documents or []:
        try:
            chunks.append(document_to_chunk(document))
        except ValidationError:
            continue
    return chunks
