"""What the knowledge-base components share: their construction checks (`KnowledgeBaseComponent`), filter parsing,
hit -> ContextChunk attribution, access to the knowledge base built from their document store.

Kept in one place so that search, document lookup, listing and the book tool check their settings and translate
filters, errors and attribution the same way for every backend.
"""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

from haystack import logging

from components.contracts import ContextChunk, ScoreKind, SourceType
from components.knowledge_base.factory import (
    backend_of,
    document_field_of,
    document_store_for,
    knowledge_base_for,
)
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.store import (
    ChunkHit,
    ChunkRecord,
    DocumentRecord,
    KnowledgeBaseMismatch,
    KnowledgeBaseUnavailable,
    SearchFilters,
    cosine_to_relevance,
)
from components.resilience import RetryableError, SourceError, SourceGuard
from components.resilience.guard import BreakerPolicy, GuardedComponent, guard_policy_from_settings
from components.settings import get_settings, setting_or
from components.text.analyzer import SENTENCE_TERMS_KEY
from components.text.dates import date_bounds
from components.text.language import SENTENCE_SPANS_KEY
from components.validation import clamp

logger = logging.getLogger(__name__)

FILTER_KEYS = ("doc_types", "date_from", "date_to", "document_ids")
# Keys of the research filters that belong to other sources (web domains, arXiv categories): accepted, not applied.
OTHER_SOURCES_KEYS = ("domains", "arxiv_categories")


def _string_list(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set)) or not all(isinstance(item, str) for item in value):
        raise SourceError(f"{name} must be a list of strings")
    return tuple(item.strip() for item in value if item.strip())


def parse_filters(filters: dict | None, as_of: str | dt.date | None = None) -> SearchFilters:
    """The `SearchFilters` of a filters dict and an `as_of` date (which caps `date_to`).

    Raises `SourceError` (a clear status, never a stack trace) for unknown keys, malformed dates and a
    `date_from` after `date_to`.
    """
    filters = {} if filters is None else filters
    if not isinstance(filters, dict):
        raise SourceError("filters must be a mapping with doc_types, date_from, date_to and document_ids")
    unknown = sorted(str(key) for key in filters if key not in FILTER_KEYS + OTHER_SOURCES_KEYS)
    if unknown:
        raise SourceError(f"unknown filter {', '.join(unknown)}; use {', '.join(FILTER_KEYS)}")
    bounds = date_bounds(as_of, filters.get("date_from"), filters.get("date_to"), SourceError)
    return SearchFilters(
        doc_types=_string_list(filters.get("doc_types"), "doc_types"),
        date_from=bounds.date_from,
        date_to=bounds.date_to,
        document_ids=_string_list(filters.get("document_ids"), "document_ids"),
    )


def check_document_store(document_store: Any) -> Any:
    """`document_store` if it is None or an integration's store the knowledge base can wrap; else ValueError."""
    if document_store is not None:
        backend_of(document_store)
    return document_store


class KnowledgeBaseAccess:
    """The knowledge base one component reads, built once from the component's document store (or, without one,
    from the store the settings choose for `collection`): in `warm_up()`, or at the first call when warm-up could not
    reach it. Failures become faults the guard understands (a mismatch is not retried; unreachable is). Thread-safe.

    Usage (inside a component):
    ```python
    self._kb = KnowledgeBaseAccess(document_store, collection)
    self._kb.warm_up()            # in warm_up(): never raises, the run's status reports a failure
    store = self._kb.get()        # in the guarded work of run()
    ```
    """

    def __init__(
        self,
        document_store: Any = None,
        collection: str | None = None,
        backend: str | None = None,
        embedding_model: str | None = None,
        checks_text_analysis: bool = True,
        document_field: str | None = None,
    ) -> None:
        self.document_store = document_store
        self.collection = collection
        self.backend = backend  # without a store: this backend's, whatever KB_BACKEND says
        self.embedding_model = embedding_model  # the model of the chunks' vectors (None: EMBEDDING_MODEL)
        # False for a component that never keyword-searches or writes: it does not refuse a base whose keyword index
        # another text analysis counted (`ChunkIndex.check_text_analysis`).
        self.checks_text_analysis = checks_text_analysis
        # For a collection someone else wrote: the meta field naming a chunk's document (None: the known ones).
        self.document_field = document_field
        # The most postings pgvector keyword search copies into memory (None: KEYWORD_INDEX_MAX_POSTINGS); set by a
        # component that keyword-searches (`KnowledgeBaseSearch`).
        self.keyword_index_max_postings: int | None = None
        # Without a store, the settings' knowledge base (KB_BACKEND, KB_COLLECTION, the database) as of now.
        self._settings = None
        if document_store is None:
            settings = get_settings()
            self._settings = settings.model_copy(update={"kb_backend": backend}) if backend is not None else settings
        self._store: KnowledgeBase | None = None
        self._shared = False  # the store is another access's (`share`): closing this one leaves it open
        self._lock = threading.Lock()

    def get(self) -> KnowledgeBase:
        """The knowledge base, opened now if warm-up could not open it."""
        return self._store if self._store is not None else self._open()

    def _open(self) -> KnowledgeBase:
        with self._lock:
            if self._store is None:
                try:
                    document_store = self.document_store
                    if document_store is None:
                        document_store = document_store_for(self._settings, self.collection)
                    self._store = knowledge_base_for(
                        document_store,
                        self.embedding_model,
                        self.checks_text_analysis,
                        self.document_field,
                        keyword_index_max_postings=self.keyword_index_max_postings,
                    )
                except (KnowledgeBaseMismatch, ValueError) as exc:  # retrying cannot help
                    raise SourceError(str(exc)) from exc
                except KnowledgeBaseUnavailable as exc:
                    raise RetryableError(str(exc), kind="connection") from exc
            return self._store

    def warm_keyword(self) -> None:
        """Start loading the opened knowledge base's in-memory keyword index, where it keeps one (pgvector)."""
        store = self._store
        warm = getattr(store.index, "warm_keyword", None) if store is not None else None
        if warm is not None:
            warm()

    def close(self) -> None:
        """Close the knowledge base opened here (its store's connection, a local engine's shared client); the next
        call opens it again. One taken from another access (`share`) is only let go: its owner closes it."""
        with self._lock:
            store, self._store = self._store, None
            shared, self._shared = self._shared, False
        if store is not None and not shared:
            store.close()

    def share(self, other: KnowledgeBaseAccess) -> None:
        """Read through `other`'s knowledge base (opened now if it is not yet) instead of opening one of its own:
        a pipeline built for a selection of sources shares its whole pipeline's connections. The caller checks that
        both read the same store alike; nothing changes when this access is open already or `other` cannot open."""
        other.warm_up()
        with self._lock:
            if self._store is None and other._store is not None:
                self._store, self._shared = other._store, True

    def warm_up(self) -> None:
        """Open the knowledge base now; a failure is logged once and retried by the next call."""
        if self._store is not None:
            return
        try:
            self._open()
        except Exception as exc:  # noqa: BLE001 - warm-up never fails a pipeline; each run reports it in its status
            logger.warning("The knowledge base is not ready yet: {reason}", reason=str(exc))


class KnowledgeBaseComponent(GuardedComponent):
    """What every knowledge-base tool component keeps and checks: the integration's `document_store` (None: the store
    `KB_BACKEND` chooses for `collection`), its `source_name` in statuses (None: the class's `SOURCE_NAME`), its
    `timeout_s` (None: TOOL_TIMEOUT_S), its guard's `breaker` (`BreakerPolicy.from_settings`) and
    the `embedding_model` of the store's vectors (None: EMBEDDING_MODEL); the knowledge base over the store is opened
    in `warm_up()`; `to_dict` writes every init parameter of the subclass.

    Usage (a component's own `__init__`, when it takes more parameters, calls
    `KnowledgeBaseComponent.__init__(self, document_store, collection, source_name, timeout_s, ...)`; not `super()`,
    which breaks on the class `@component` makes anew):
    ```python
    @component
    class GetDocument(KnowledgeBaseComponent):
        SOURCE_NAME = "kb_document"
    ```
    """

    SOURCE_NAME = "kb"
    BACKEND: str | None = None  # the backend used without a document store; None: KB_BACKEND
    # False for a component that never keyword-searches or writes (listing documents, reading one): it opens a base
    # whatever text analysis counted its keyword index (that of another pipeline's spacy_model, say).
    CHECKS_TEXT_ANALYSIS = True

    def __init__(
        self,
        document_store: Any = None,
        collection: str | None = None,
        source_name: str | None = None,
        timeout_s: float | None = None,
        breaker: BreakerPolicy | dict[str, Any] | None = None,
        embedding_model: str | None = None,
        document_field: str | None = None,
    ) -> None:
        if collection is not None and (not isinstance(collection, str) or not collection.strip()):
            raise ValueError("collection must be a non-empty name, or None for the settings' collection")
        if source_name is not None and (not isinstance(source_name, str) or not source_name.strip()):
            raise ValueError(f"source_name must be a non-empty name, or None for {self.SOURCE_NAME}")
        if timeout_s is not None:
            timeout_s = clamp(timeout_s, 0.0, 120.0, "timeout_s")
            if timeout_s <= 0:
                raise ValueError("timeout_s must be positive, or None for the settings' tool timeout")
        # None: TOOL_TIMEOUT_S as the component is built; `to_dict` writes the value used.
        self.timeout_s = setting_or(timeout_s, "tool_timeout_s")
        self._policy = guard_policy_from_settings(self, breaker, timeout_s=self.timeout_s)
        self.document_store = check_document_store(document_store)
        self.collection = collection
        self.source_name = source_name or self.SOURCE_NAME
        # The model of the knowledge base's vectors (and of a question's); None: EMBEDDING_MODEL as it is built.
        self.embedding_model = setting_or(embedding_model, "embedding_model")
        # For an attached collection: the meta field naming a chunk's document (None: KB_DOCUMENT_FIELD as it is
        # built; blank: the known fields).
        self.document_field = document_field_of(document_field)
        self._kb = KnowledgeBaseAccess(
            self.document_store,
            collection,
            self.BACKEND,
            self.embedding_model,
            self.CHECKS_TEXT_ANALYSIS,
            self.document_field,
        )

    def warm_up(self) -> None:
        """Open the knowledge base over the document store (a failure shows in the next run's status)."""
        self._kb.warm_up()

    def warm_up_from(self, other: object) -> None:
        """`warm_up()` reading through `other`'s knowledge base when it is a component configured alike (a pipeline
        built for a selection of sources, from its whole pipeline): no second set of connections."""
        alike = type(other) is type(self) and isinstance(other, KnowledgeBaseComponent)
        if alike and other.to_dict() == self.to_dict():
            self._kb.share(other._kb)
        self.warm_up()

    def close(self) -> None:
        """Close the knowledge base `warm_up` opened (the runtime closes its pipelines' components when it ends)."""
        self._kb.close()

    def _guard(self) -> SourceGuard:
        """The resilience guard of one call, with this component's name and timeout."""
        return SourceGuard(self.source_name, self._policy)


def hit_to_chunk(
    hit: ChunkHit,
    store: KnowledgeBase,
    ranks: dict[str, int],
    raw_score: float | None = None,
    score_kind: ScoreKind | None = None,
) -> ContextChunk:
    """The `ContextChunk` of a search hit: full attribution, relevance from the cosine, the raw score kept."""
    raw = hit.raw_score if raw_score is None else raw_score
    relevance = cosine_to_relevance(hit.cosine)
    kind = score_kind or hit.score_kind
    return record_to_chunk(hit.document, hit.chunk, hit.total_chunks, store, relevance, raw, kind, ranks)


def ranked_chunks(hits: list[ChunkHit], store: KnowledgeBase, floor: float, source_name: str) -> list[ContextChunk]:
    """The hits whose semantic relevance reaches `floor`, in their order, as `ContextChunk`s ranked 1, 2, ... under
    `source_name`."""
    kept = [hit for hit in hits if cosine_to_relevance(hit.cosine) >= floor]
    return [hit_to_chunk(hit, store, {source_name: rank}) for rank, hit in enumerate(kept, start=1)]


def record_to_chunk(
    document: DocumentRecord,
    chunk: ChunkRecord,
    total: int,
    store: KnowledgeBase,
    relevance: float = 0.0,
    raw_score: float | None = None,
    score_kind: ScoreKind = ScoreKind.NONE,
    ranks: dict[str, int] | None = None,
) -> ContextChunk:
    """A stored chunk as a `ContextChunk` with full attribution (`KnowledgeBaseMetadata` plus the chunk's page and
    section); outside a search it has no relevance to any question (the defaults)."""
    metadata: dict[str, Any] = {
        "document_id": document.document_id,
        "document_title": document.title,
        "collection_name": store.collection,
        "chunk_index": chunk.chunk_index,
        "document_total_chunks": max(int(total), chunk.chunk_index + 1, 1),
        "embedding_model": store.embedding_model,
        "similarity_score": raw_score,
        "doc_type": document.doc_type,
    }
    for key in ("page_number", "section_title", SENTENCE_SPANS_KEY, SENTENCE_TERMS_KEY):
        if chunk.metadata.get(key) is not None:
            metadata[key] = chunk.metadata[key]
    return ContextChunk(
        id=chunk.chunk_id,
        source_type=SourceType.KB,
        text=chunk.text or " ",
        semantic_relevance=relevance,
        source_id=document.document_id,
        source_title=document.title,
        source_url=document.url,
        source_date=document.date,
        raw_score=raw_score,
        score_kind=score_kind,
        ranks=dict(ranks or {}),
        metadata=metadata,
    )


def document_to_dict(document: DocumentRecord, chunk_count: int, include_text: bool = False) -> dict[str, Any]:
    """A JSON-ready view of a document for lists and detail pages."""
    data: dict[str, Any] = {
        "document_id": document.document_id,
        "title": document.title,
        "source": document.source,
        "doc_type": document.doc_type,
        "content_hash": document.content_hash,
        "url": document.url,
        "date": document.date.isoformat() if document.date else None,
        "ingested_at": document.ingested_at.isoformat() if document.ingested_at else None,
        "metadata": dict(document.metadata or {}),
        "chunk_count": int(chunk_count),
    }
    if include_text:
        data["text"] = document.text
    return data
