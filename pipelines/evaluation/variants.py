"""The retrieval and answering variants an evaluation compares, each answering one question at a time.

- `dense`, `keyword`: the plain knowledge-base baselines (vector search; full-text search).
- `hybrid`: both, fused by reciprocal rank fusion (k=60).
- `research`: the catalog's default research pipeline (its sources, ranker and answer); `research:kb+graph`
  runs it with exactly those sources, so a source's contribution is the difference of two variants.

Every variant returns a `VariantAnswer`: ranked chunks (with their document ids), the answer and its cited
sentences when it writes one, and per-source statuses.

Usage:
```python
variant = build_variant("hybrid", collection="research")
answer = variant.ask("Who won Super Bowl 50?", top_k=10)
[chunk.document_id for chunk in answer.chunks]
```
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from haystack import logging

from components.contracts.selection import SOURCE_NAMES
from components.knowledge_base.search import KnowledgeBaseSearch
from pipelines.evaluation.metrics import split_cited_sentences

logger = logging.getLogger(__name__)

BASELINES = ("dense", "keyword", "hybrid")
DEFAULT_VARIANTS = ("keyword", "dense", "hybrid", "research")


@dataclass
class RankedChunk:
    """A chunk a variant returned, in rank order."""

    chunk_id: str
    document_id: str | None
    source_type: str
    text: str
    ranks: dict[str, int] = field(default_factory=dict)  # the chunk's rank in each branch that found it


@dataclass
class CitedSentence:
    """A sentence of the answer and the chunks it cites."""

    text: str
    chunk_ids: list[str]
    supported_by_pipeline: bool | None = None


@dataclass
class VariantAnswer:
    """What one variant made of one question."""

    chunks: list[RankedChunk]
    answer: str | None = None
    short_answer: str = ""  # the answer's leading name, date, number or place, when it has one
    short_answer_confidence: float | None = None  # how likely the short answer is right (None: no short answer)
    sentences: list[CitedSentence] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)
    # Per part of the question: {"question", "short_answer", "short_answer_confidence", "sure"} (the offline answer's).
    parts: list[dict[str, Any]] = field(default_factory=list)


def parse_variant(spec: str, default_sources: Sequence[str] | None = None) -> tuple[str, list[str] | None]:
    """(kind, sources) of a variant name: `dense`, `keyword`, `hybrid`, `research` or `research:kb+graph`."""
    name = spec.strip().lower()
    kind, _, source_part = name.partition(":")
    if kind in BASELINES:
        if source_part:
            raise ValueError(f"variant {spec!r}: the {kind} baseline searches the knowledge base only")
        return kind, None
    if kind != "research":
        raise ValueError(f"unknown variant {spec!r}; use dense, keyword, hybrid, research or research:kb+graph")
    if not source_part:
        return kind, list(default_sources) if default_sources else None
    sources = [part for part in re.split(r"[+,]", source_part) if part]
    unknown = [source for source in sources if source not in SOURCE_NAMES]
    if unknown or not sources:
        raise ValueError(f"variant {spec!r}: sources must be among {', '.join(SOURCE_NAMES)}")
    return kind, sources


class KnowledgeBaseVariant:
    """A plain knowledge-base search as a one-component pipeline: `KnowledgeBaseSearch` in dense, keyword or
    hybrid (reciprocal rank fusion) mode, over the given collection (None: the settings' collection)."""

    def __init__(self, mode: str, collection: str | None = None) -> None:
        if mode not in BASELINES:
            raise ValueError(f"mode must be one of {BASELINES}, not {mode!r}")
        from haystack import Pipeline

        self.mode = mode
        self.pipeline = Pipeline()
        self.pipeline.add_component("search", KnowledgeBaseSearch(mode=mode, collection=collection, limit=10))
        self.pipeline.warm_up()

    def ask(self, question: str, top_k: int = 10) -> VariantAnswer:
        outputs = self.pipeline.run({"search": {"query": question, "limit": top_k}})["search"]
        status = outputs["status"]
        if status.status.value in ("error", "timeout"):
            raise RuntimeError(f"the {self.mode} search failed: {status.message}")
        chunks = [
            RankedChunk(
                chunk_id=str(document.id),
                document_id=(document.meta or {}).get("document_id"),
                source_type=str((document.meta or {}).get("source_type") or "kb"),
                text=document.content or "",
                ranks=dict((document.meta or {}).get("ranks") or {}),
            )
            for document in outputs["documents"]
        ]
        return VariantAnswer(chunks=chunks, statuses={f"kb_{self.mode}": status.status.value})


def _get(obj: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if not isinstance(obj, dict) and hasattr(obj, name):
            return getattr(obj, name)
    return default


def _source_type(chunk: Any) -> str:
    value = _get(chunk, "source_type", default="kb")
    return str(getattr(value, "value", value))


class ResearchVariant:
    """The catalog's research pipeline with a fixed set of sources (None: the pipeline's default)."""

    def __init__(self, catalog: Any, sources: list[str] | None = None) -> None:
        self.catalog = catalog
        self.sources = sources

    def ask(self, question: str, top_k: int = 10) -> VariantAnswer:
        result = self.catalog.research(question, sources=self.sources, top_k=top_k)
        chunks: list[RankedChunk] = []
        for chunk in _get(result, "chunks", default=[]) or []:
            metadata = _get(chunk, "metadata", default={}) or {}
            chunks.append(
                RankedChunk(
                    chunk_id=str(_get(chunk, "id", default="")),
                    document_id=metadata.get("document_id"),
                    source_type=_source_type(chunk),
                    text=str(_get(chunk, "text", default="")),
                    ranks=dict(_get(chunk, "ranks", default={}) or {}),
                )
            )
        by_number = _citation_numbers(result, chunks)
        sentences: list[CitedSentence] = []
        for sentence in _get(result, "sentences", default=[]) or []:
            text = str(_get(sentence, "text", "sentence", default=""))
            refs = _get(sentence, "citations", "cited", "numbers", "chunk_ids", default=[]) or []
            chunk_ids = [
                by_number.get(ref, ref) if isinstance(ref, int) else str(_get(ref, "chunk_id", default=ref))
                for ref in refs
            ]
            if text and chunk_ids:
                supported = _get(sentence, "supported", default=None)
                sentences.append(CitedSentence(text, [str(c) for c in chunk_ids], supported))
        if not sentences:
            answer_text = str(_get(result, "answer", default="") or "")
            sentences = [
                CitedSentence(text, [by_number[n] for n in numbers if n in by_number])
                for text, numbers in split_cited_sentences(answer_text)
            ]
        statuses = {}
        for status in _get(result, "statuses", default=[]) or []:
            source = str(_get(status, "source", default="?"))
            kind = _get(status, "status", default="")
            statuses[source] = str(getattr(kind, "value", kind))
        return VariantAnswer(
            chunks=chunks,
            answer=str(_get(result, "answer", default="") or ""),
            short_answer=str(_get(result, "short_answer", default="") or ""),
            short_answer_confidence=_get(result, "short_answer_confidence", default=None),
            sentences=sentences,
            statuses=statuses,
            parts=[
                part.model_dump() if hasattr(part, "model_dump") else dict(part)
                for part in _get(result, "parts", default=[]) or []
            ],
        )


def _citation_numbers(result: Any, chunks: list[RankedChunk]) -> dict[int, str]:
    """Citation number -> chunk id, from the result's citations, else `[n]` as the n-th chunk."""
    mapping: dict[int, str] = {}
    for position, citation in enumerate(_get(result, "citations", default=[]) or [], start=1):
        number = _get(citation, "number", "index", "n", default=position)
        chunk_id = _get(citation, "chunk_id", "document_id", "id", default=None)
        if chunk_id is None:
            chunk = _get(citation, "chunk", "document", default=None)
            chunk_id = _get(chunk, "id", default=None) if chunk is not None else None
        if chunk_id is not None:
            mapping[int(number)] = str(chunk_id)
    if not mapping:
        mapping = {position: chunk.chunk_id for position, chunk in enumerate(chunks, start=1)}
    return mapping


def build_variant(  # noqa: ANN201
    spec: str, *, collection: str | None = None, catalog: Any = None, default_sources: Sequence[str] | None = None
):
    """The variant a spec names; research variants need the `catalog`."""
    kind, sources = parse_variant(spec, default_sources)
    if kind in BASELINES:
        return KnowledgeBaseVariant(kind, collection)
    return ResearchVariant(catalog, sources)
