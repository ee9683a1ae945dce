"""The memory store interface both backends implement (embedded PostgreSQL, Zep), and the shapes they share.

A remembered `Interaction` is one question with its answer, the entities it mentions and when it happened.
`RecallQuery` is what a recall asks for; the store turns matches into `RecalledInteraction`s, which the recall
component turns into citable memory chunks.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from components.contracts import ContextChunk, MemoryMetadata, ScoreKind, SourceType
from components.resilience import SourceError
from components.text.dates import parse_moment

_WINDOW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(m|min|minutes?|h|hours?|d|days?|w|weeks?)\s*$", re.IGNORECASE)
_WINDOW_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_ISO_WINDOW = re.compile(r"^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?)?$", re.IGNORECASE)
_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

MAX_QUERY_CHARS = 2000
MAX_NUM_RESULTS = 50


class MemoryUnavailable(SourceError):
    """The memory backend is not configured; the message says what to do (a fault retrying will not mend)."""


@dataclass
class Interaction:
    """One remembered question and answer."""

    session_id: str
    query: str
    response: str
    response_summary: str
    user_id: str | None = None
    entities: list[str] = field(default_factory=list)
    cited_sources: list[dict[str, Any]] = field(default_factory=list)
    created_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    interaction_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True)
class RecallQuery:
    """What a recall asks for: every restriction already parsed and clamped."""

    text: str
    embedding: list[float] | None = None
    session_id: str | None = None
    user_id: str | None = None
    limit: int = 3
    since: dt.datetime | None = None
    before: dt.datetime | None = None
    entities: tuple[str, ...] = ()


@dataclass
class RecalledInteraction:
    """A stored interaction a recall found, with its cosine similarity to the query when known."""

    interaction: Interaction
    cosine: float | None
    raw_score: float | None = None
    score_kind: ScoreKind = ScoreKind.COSINE


class MemoryStore(ABC):
    """What every memory backend offers; implementations are thread-safe and raise, the components guard them."""

    backend: str

    @abstractmethod
    def add(self, interaction: Interaction, embedding: list[float] | None) -> None:
        """Remember `interaction` (with the embedding of its text when the backend stores vectors)."""

    @abstractmethod
    def search(self, query: RecallQuery) -> list[RecalledInteraction]:
        """The interactions that best match `query`, best first, at most `query.limit`."""

    def latest(self, session_id: str, limit: int) -> list[Interaction]:
        """The session's newest `limit` interactions by time, oldest first (what a follow-up question refers to)."""
        found = self.search(RecallQuery(text="", session_id=session_id, limit=limit))
        return sorted((item.interaction for item in found), key=lambda interaction: interaction.created_at)[-limit:]

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


def parse_time_window(value: str | None) -> dt.timedelta | None:
    """A duration from `7d`, `24h`, `2w`, `30m` or ISO `P7D`; None for empty; ValueError with one sentence else."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    match = _WINDOW.match(text)
    if match:
        return dt.timedelta(**{_WINDOW_UNITS[match.group(2).lower()[0]]: float(match.group(1))})
    match = _ISO_WINDOW.match(text)
    if match and any(match.groups()):
        weeks, days, hours, minutes = (int(part or 0) for part in match.groups())
        return dt.timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes)
    raise ValueError(f"time_window {text!r} is not a duration like 30m, 24h, 7d, 2w or P7D.")


def parse_as_of(value: str | None) -> dt.datetime | None:
    """The exclusive upper time bound for `as_of`: a date includes its whole day; ValueError for malformed input."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    try:
        moment = parse_moment(text)
    except ValueError:
        raise ValueError(f"as_of {text!r} is not an ISO date (YYYY-MM-DD) or date-time.") from None
    if not isinstance(moment, dt.datetime):
        return dt.datetime.combine(moment + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    return moment + dt.timedelta(microseconds=1)


def summarise_answer(answer: str, max_chars: int = 300) -> str:
    """The answer's first sentences, citation markers removed, within `max_chars` (never invented text)."""
    text = _CITATION.sub("", answer or "").strip()
    text = re.sub(r"\s+", " ", text)
    if len(text) <= max_chars:
        return text
    summary = ""
    for sentence in _SENTENCE_END.split(text):
        if len(summary) + len(sentence) + 1 > max_chars:
            break
        summary = f"{summary} {sentence}".strip()
    return summary or text[: max_chars - 1].rstrip() + "…"


def evidence_text(interaction: Interaction) -> str:
    """What a remembered interaction offers as evidence: the answer given (the question is in its title and meta).

    Only the answer, so an answer composed from memory never quotes the earlier question back as a finding.
    """
    return (interaction.response_summary or interaction.response or interaction.query).strip()


def memory_chunk_text(interaction: Interaction) -> str:
    """The text a remembered interaction is matched on: the earlier question with its answer."""
    answer = interaction.response_summary or interaction.response
    if not interaction.query:
        return answer
    return f"Earlier question: {interaction.query}\nAnswer given: {answer}".strip()


def interaction_to_chunk(found: RecalledInteraction, relevance: float) -> ContextChunk:
    """The citable memory chunk of a recalled interaction."""
    interaction = found.interaction
    when = interaction.created_at.astimezone(dt.UTC)
    title_query = interaction.query if len(interaction.query) <= 80 else interaction.query[:79] + "…"
    metadata = MemoryMetadata(
        prior_query=interaction.query,
        prior_response_summary=interaction.response_summary,
        session_id=interaction.session_id,
        interaction_timestamp=when.isoformat(),
        entity_references=list(interaction.entities),
    ).model_dump()
    metadata["user_id"] = interaction.user_id
    metadata["memory_backend_id"] = interaction.interaction_id
    return ContextChunk(
        id=f"memory:{interaction.interaction_id}",
        source_type=SourceType.MEMORY,
        text=evidence_text(interaction) or "(empty interaction)",
        semantic_relevance=relevance,
        source_id=interaction.interaction_id,
        source_title=f"Conversation {when:%Y-%m-%d %H:%M} UTC: {title_query}" if title_query else "Conversation memory",
        source_date=when.date(),
        raw_score=found.raw_score,
        score_kind=found.score_kind,
        metadata=metadata,
    )


def mentioned_entities(text: str, entities: list[str] | tuple[str, ...]) -> list[str]:
    """The entities (case-insensitive, whole words) that `text` mentions."""
    lowered = (text or "").lower()
    return [
        entity
        for entity in entities
        if entity and re.search(r"(?<!\w)" + re.escape(entity.lower()) + r"(?!\w)", lowered) is not None
    ]
