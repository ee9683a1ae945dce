"""`ContextChunk`: the one shape of evidence every source returns, and its one conversion to and from `Document`.

A chunk travels through Haystack pipelines as a `Document` whose `meta` holds the chunk's fields flat (so that
Haystack filters and joiners see them) plus the source-specific metadata. `chunk_to_document` and
`document_to_chunk` are the only places that know that layout.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import Enum
from typing import Any

from haystack import Document
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from components.text.analyzer import SENTENCE_TERMS_KEY
from components.text.dates import parse_date


class SourceType(str, Enum):  # noqa: UP042 - a StrEnum would change what str() and f-strings print for a member
    """Where a chunk came from."""

    KB = "kb"
    GRAPH = "graph"
    WEB = "web"
    ARXIV = "arxiv"
    MEMORY = "memory"


class ScoreKind(str, Enum):  # noqa: UP042 - a StrEnum would change what str() and f-strings print for a member
    """What a raw score measures; only `semantic_relevance` is comparable across sources."""

    COSINE = "cosine"
    L2 = "l2"
    BM25 = "bm25"
    TS_RANK = "ts_rank"
    RRF = "rrf"
    NONE = "none"


class _SourceMetadata(BaseModel):
    model_config = ConfigDict(extra="allow")


class KnowledgeBaseMetadata(_SourceMetadata):
    """Metadata every knowledge-base chunk carries."""

    document_id: str
    document_title: str
    collection_name: str
    chunk_index: int = Field(ge=0)
    document_total_chunks: int = Field(ge=1)
    embedding_model: str
    similarity_score: float | None = None


class WebMetadata(_SourceMetadata):
    """Metadata of a chunk from a fetched web page."""

    domain: str
    page_url: str
    page_title: str = ""
    fetch_timestamp: str
    language: str | None = None
    content_type: str | None = None


class ArxivMetadata(_SourceMetadata):
    """Metadata of a chunk from an arXiv paper."""

    paper_id: str
    paper_title: str
    authors: list[str]
    publication_date: str | None = None
    arxiv_categories: list[str] = Field(default_factory=list)
    arxiv_url: str
    pdf_url: str | None = None
    abstract: str = ""
    doi: str | None = None


class MemoryMetadata(_SourceMetadata):
    """Metadata of a remembered interaction."""

    prior_query: str
    prior_response_summary: str = ""
    session_id: str
    interaction_timestamp: str
    entity_references: list[str] = Field(default_factory=list)


class GraphMetadata(_SourceMetadata):
    """Metadata of a fact from the knowledge graph."""

    fact_uuid: str
    valid_at: str | None = None
    invalid_at: str | None = None
    entities: list[str] = Field(default_factory=list)
    document_id: str | None = None
    chunk_id: str | None = None
    chunk_index: int | None = None
    sentence_index: int | None = None
    source_node_uuid: str | None = None


_METADATA_MODELS: dict[SourceType, type[_SourceMetadata]] = {
    SourceType.KB: KnowledgeBaseMetadata,
    SourceType.WEB: WebMetadata,
    SourceType.ARXIV: ArxivMetadata,
    SourceType.MEMORY: MemoryMetadata,
    SourceType.GRAPH: GraphMetadata,
}


class ContextChunk(BaseModel):
    """A piece of evidence with full source attribution.

    `semantic_relevance` is the one score comparable across sources (0-1, from the same embedding model);
    `raw_score` keeps what the backend returned, with its `score_kind`. `ranks` records the chunk's rank in each
    pipeline stage (`kb_dense`, `kb_keyword`, `fused`, `ranked`, ...), so a reader can see why it is where it is.
    """

    model_config = ConfigDict(use_enum_values=False)

    id: str = Field(min_length=1)
    source_type: SourceType
    text: str = Field(min_length=1)
    semantic_relevance: float = Field(ge=0.0, le=1.0)
    source_id: str = Field(min_length=1)
    source_title: str = ""
    source_url: str | None = None
    source_date: dt.date | None = None
    raw_score: float | None = None
    score_kind: ScoreKind = ScoreKind.NONE
    ranks: dict[str, int] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("semantic_relevance", mode="before")
    @classmethod
    def _clamp_relevance(cls, value: Any) -> Any:
        # Floating-point noise (1.0000001) must not reject a chunk; the contract is "0-1".
        if isinstance(value, (int, float)):
            return min(1.0, max(0.0, float(value)))
        return value

    @field_validator("source_date", mode="before")
    @classmethod
    def _parse_date(cls, value: Any) -> Any:
        return parse_date(value, strict=True) if isinstance(value, (str, dt.date)) else value

    @model_validator(mode="after")
    def _validate_source_metadata(self) -> ContextChunk:
        model = _METADATA_MODELS.get(self.source_type)
        if model is not None:
            self.metadata = model.model_validate(self.metadata).model_dump(exclude_none=False)
        return self


# Fields of ContextChunk that are stored flat in Document.meta; everything else in meta is source metadata.
_CORE_META_KEYS = tuple(key for key in ContextChunk.model_fields if key not in {"id", "text", "metadata"})
# What a chunk's Document carries for the pipeline's own stages alone (the sentence terms ingestion stores for the
# ranker): no part of the chunk a reader, a tool or an API is shown.
PIPELINE_ONLY_META = frozenset({SENTENCE_TERMS_KEY})


def shown_metadata(meta: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of a chunk's metadata without what only the pipeline's stages read (`PIPELINE_ONLY_META`)."""
    return {key: value for key, value in (meta or {}).items() if key not in PIPELINE_ONLY_META}


class ChunkDocument(Document):
    """The `Document` that carries a `ContextChunk`: a plain Haystack Document that copies itself cheaply.

    Haystack deep-copies every component's inputs; the generic deep copy walks each chunk's two dozen metadata
    values one by one and made up about a third of a research question's own time. Chunk metadata is JSON-like
    (plain values in dicts and lists), so copying its containers is a true copy.
    (Not re-decorated as a dataclass: the fields are inherited, and so is Haystack's init-tracking constructor.)
    """

    def __deepcopy__(self, memo: dict[int, Any]) -> ChunkDocument:
        # Field by field, not through the constructor: Haystack's init tracking and mutation warnings cost more
        # than the copy itself (15 -> 5 us a chunk, about 170 chunks copied per research question).
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.__dict__["meta"] = _plain_copy(self.meta)
        clone.__dict__["embedding"] = list(self.embedding) if self.embedding is not None else None
        return clone


@dataclass(frozen=True, eq=False)
class ReadOnlyDocuments:
    """Documents handed on between components as one value that copies as itself: Haystack deep-copies a list of
    documents chunk by chunk for every component it feeds, but hands this on as it is. Nothing may change the
    documents it holds."""

    documents: tuple[Document, ...] = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> ReadOnlyDocuments:
        return self


@dataclass(frozen=True, eq=False)
class BranchDocuments(ReadOnlyDocuments):
    """One source's documents, best first, as the ranker reads them for every branch's rank of a chunk.

    A source hands its documents to the `DocumentJoiner` and, as this read-only view, to the ranker: Haystack copies
    a list of documents chunk by chunk for every component it feeds, but hands this on as it is (it copies as itself),
    so the chunks reach the ranker once, through the joiner. Nothing may change the documents it holds.
    """


@dataclass(frozen=True, eq=False)
class FusedDocuments(ReadOnlyDocuments):
    """The joiner's fused chunks, best first, each with its fusion score, as the ranker reads them: a joiner built with
    `fused_view` hands its output on as this read-only view (Haystack would copy a list chunk by chunk again for the
    ranker, which reads only their ids and scores). Nothing may change the documents it holds."""


@dataclass(frozen=True, eq=False)
class RankedDocuments(ReadOnlyDocuments):
    """The ranked chunks, best first: the sources the answer numbers [1]..[n], as the stages after the ranker read them.

    The ranker hands its chunks on as this read-only view (and as a `list[Document]` to the prompt builder, which
    renders documents): Haystack copies a list of documents chunk by chunk for every component it feeds, but hands
    this on as it is (it copies as itself), so the stages that read the same chunks (answer, question analysis,
    answer builder, citation check, conflicts, memory) share one value.
    Nothing may change the documents it holds; a stage that annotates a chunk makes its own (`dataclasses.replace`).
    """


def documents_of(documents: list[Document] | ReadOnlyDocuments | None) -> list[Document]:
    """The documents a socket received, as a new list: from a list, a read-only view, or nothing (None)."""
    if documents is None:
        return []
    return list(documents.documents if isinstance(documents, ReadOnlyDocuments) else documents)


# Taken as they are, told apart by their exact type (an `isinstance` check of every value cost more than the rest).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_copy(value: Any) -> Any:
    """A copy of JSON-like metadata (dicts and lists of plain values, such as the ranker's evidence)."""
    # Plain values are taken as they are without a call each: most of the metadata is scalars.
    if isinstance(value, dict):
        return {key: item if type(item) in _SCALARS else _plain_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in _SCALARS else _plain_copy(item) for item in value]
    return value


def chunk_to_document(chunk: ContextChunk, embedding: list[float] | None = None) -> Document:
    """The Haystack `Document` that carries `chunk` through a pipeline."""
    meta: dict[str, Any] = dict(chunk.metadata)
    meta.update(
        source_type=chunk.source_type.value,
        source_id=chunk.source_id,
        source_title=chunk.source_title,
        source_url=chunk.source_url,
        source_date=chunk.source_date.isoformat() if chunk.source_date else None,
        semantic_relevance=chunk.semantic_relevance,
        raw_score=chunk.raw_score,
        score_kind=chunk.score_kind.value,
        ranks=dict(chunk.ranks),
    )
    return ChunkDocument(
        id=chunk.id, content=chunk.text, meta=meta, score=chunk.semantic_relevance, embedding=embedding
    )


def document_to_chunk(document: Document) -> ContextChunk:
    """The `ContextChunk` a pipeline `Document` carries (without what only the pipeline's stages read:
    `shown_metadata`); raises `pydantic.ValidationError` if it is not one."""
    meta = shown_metadata(document.meta)
    core = {key: meta.pop(key) for key in _CORE_META_KEYS if key in meta}
    core.setdefault("semantic_relevance", document.score if document.score is not None else 0.0)
    for key in ("ranks", "score_kind"):
        if core.get(key) is None:
            core.pop(key, None)
    return ContextChunk(id=document.id, text=document.content or "", metadata=meta, **core)
