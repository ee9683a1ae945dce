"""`KnowledgeBaseEnricher`: what an attached Haystack collection needs before the assistant can do its best with it.

`recognise()` reads the collection's chunks once and records the documents they belong to in the document registry
(see `components/knowledge_base/attach.py`): fast, no model, and enough to search, list, open and cite. `enrich()`
adds the rest, beside the user's rows and never in them:

- per chunk, its sentence spans with in-context sentence vectors and the analyzer's term counts (one forward pass of
  the embedding model per chunk, as at ingestion), which the ranker, the keyword statistics and the answer use;
- per document, the knowledge graph's entities and dated facts (the ingestion hooks, in the registry's transaction).

Both are incremental: a document whose chunks have not changed since the last run (same content hash) and whose
graph is current is skipped, so `research kb enrich` can be run again after the user's own pipeline adds documents.
Nothing the user wrote is modified or deleted; documents that disappeared from the collection leave the registry.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from haystack import logging

from components.embedding import get_embedding_model
from components.knowledge_base.attach import DocumentRecogniser, RecognisedDocument
from components.knowledge_base.chunk_index import ChunkEvidence, batches, document_to_record
from components.knowledge_base.hooks import IngestHook
from components.knowledge_base.store import KnowledgeBaseUnavailable
from components.redaction import cut
from components.resilience.errors import first_line
from components.text.analyzer import term_counts
from components.text.language import sentence_spans

logger = logging.getLogger(__name__)

# Below this cosine between the stored embedding of a chunk and the configured model's embedding of its text, the
# collection was embedded by another model, and dense search would compare unrelated vectors.
SAME_MODEL_COSINE = 0.95
_SAMPLE = 8


@dataclass
class EnrichProgress:
    """Where a run is: the stage (`reading`, `registering`, `enriching`), and how far into it."""

    stage: str
    done: int
    total: int


@dataclass
class EnrichReport:
    """What a run did."""

    chunks: int = 0
    documents: int = 0
    registered: int = 0  # new or changed documents written to the registry
    ingested: int = 0  # documents whose chunks the registry already holds under another document (ingested ones)
    removed: int = 0  # documents no longer in the collection, taken out of the registry
    enriched: int = 0  # documents given evidence and graph facts
    evidence_chunks: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (
            f"{self.documents} documents ({self.chunks} chunks) recognised: {self.registered} new or changed, "
            f"{self.removed} gone; {self.enriched} enriched ({self.evidence_chunks} chunks) in {self.seconds:.1f} s"
        )
        if self.ingested:
            text += f"; {self.ingested} ingested by the assistant itself (left as they are)"
        if self.problems:
            text += f"; {len(self.problems)} problem(s): " + "; ".join(self.problems[:3])
        return text


class KnowledgeBaseEnricher:
    """Recognises and enriches the documents of an attached collection.

    Usage:
    ```python
    # a KnowledgeBase over the user's document store, and the hooks to run (the ingestion's `default_hooks`)
    enricher = KnowledgeBaseEnricher(knowledge_base, hooks=[GraphIngestHook(knowledge_base.collection)])
    print(enricher.enrich(progress=lambda p: print(p.stage, p.done, p.total)).summary())
    ```
    """

    def __init__(self, knowledge_base: Any, hooks: list[IngestHook], document_field: str | None = None) -> None:
        self.knowledge_base = knowledge_base
        self.index = knowledge_base.index
        self.registry = knowledge_base.registry
        self.hooks = list(hooks)
        self.document_field = document_field

    @functools.cached_property
    def model(self) -> Any:
        return get_embedding_model(self.knowledge_base.embedding_model)

    # -- recognition ------------------------------------------------------------------------------------------------

    def _read(self, progress: Callable[[EnrichProgress], None] | None) -> tuple[list[RecognisedDocument], int]:
        recogniser = DocumentRecogniser(self.knowledge_base.collection, self.document_field)
        total = self.index.count()
        read = 0
        for batch in self.index.iter_documents(batch_size=1000, with_embeddings=False):
            recogniser.add(batch)
            read += len(batch)
            if progress:
                progress(EnrichProgress("reading", read, total))
        return recogniser.documents(), read

    def recognise(self, progress: Callable[[EnrichProgress], None] | None = None) -> EnrichReport:
        """Record the collection's documents in the registry (new and changed ones; vanished ones leave it)."""
        return self._run(progress, enrich=False)

    def enrich(self, progress: Callable[[EnrichProgress], None] | None = None) -> EnrichReport:
        """Recognise, then give every document that lacks them its sentence vectors, term counts and graph facts."""
        return self._run(progress, enrich=True)

    def _run(self, progress: Callable[[EnrichProgress], None] | None, enrich: bool) -> EnrichReport:
        started = time.monotonic()
        report = EnrichReport()
        found, report.chunks = self._read(progress)
        report.documents = len(found)
        if found and enrich:
            self.check_embedding_model(found)
        present = {doc.record.document_id for doc in found}
        stale_graph = self._stale_graph([doc.record.document_id for doc in found]) if enrich else set()
        for done, doc in enumerate(found, start=1):
            owners = self.registry.chunk_documents(doc.chunk_ids)
            if any(owner != doc.record.document_id for owner, _ in owners.values()):
                # Chunks the assistant ingested itself (or another recognised document holds): theirs already.
                report.ingested += 1
            else:
                self._register_one(doc, report, enrich, doc.record.document_id in stale_graph)
            if progress:
                progress(EnrichProgress("enriching" if enrich else "registering", done, len(found)))
        report.removed = self._forget_vanished(present)
        report.seconds = time.monotonic() - started
        return report

    def _register_one(self, doc: RecognisedDocument, report: EnrichReport, enrich: bool, stale_graph: bool) -> None:
        known = self.registry.get(doc.record.document_id)
        changed = known is None or known[0].content_hash != doc.record.content_hash or known[1] != doc.chunk_ids
        needs_evidence = enrich and (changed or len(self.index.evidence(doc.chunk_ids)) < len(doc.chunk_ids))
        try:
            if needs_evidence or (enrich and stale_graph):
                self._enrich_one(doc, report, with_evidence=needs_evidence)
                report.registered += int(changed)
            elif changed:
                self.registry.put(doc.record, doc.chunk_ids)
                report.registered += 1
        except KnowledgeBaseUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - one unreadable document must not stop the others
            logger.warning("Enriching {source} failed: {reason}", source=doc.record.source, reason=cut(str(exc), 200))
            report.problems.append(f"{doc.record.title}: {first_line(exc, 160)}")

    def _stale_graph(self, document_ids: list[str]) -> set[str]:
        stale: set[str] = set()
        for hook in self.hooks:
            is_current = getattr(hook, "is_current", None)
            if is_current is None:
                continue
            for batch in batches(document_ids, 500):
                stale.update(doc_id for doc_id, ok in is_current(batch).items() if not ok)
        return stale

    def _enrich_one(self, doc: RecognisedDocument, report: EnrichReport, with_evidence: bool) -> None:
        chunks = self.index.fetch(doc.chunk_ids)
        records = [document_to_record(chunk, doc.record.document_id, i) for i, chunk in enumerate(chunks)]
        if with_evidence and records:
            texts = [record.text for record in records]
            _, sentence_vectors, kept = self.model.embed_with_sentence_spans(
                texts, [sentence_spans(text) for text in texts]
            )
            evidence = []
            for record, spans, vectors in zip(records, kept, sentence_vectors, strict=True):
                record.sentence_spans = spans
                record.sentence_embeddings = vectors if len(spans) else None
                record.term_counts = term_counts(f"{doc.record.title}\n{record.text}")
                evidence.append(ChunkEvidence.of(record))
            self.index.add_evidence(chunks, evidence)
            report.evidence_chunks += len(records)

        def also(connection: Any) -> None:
            for hook in self.hooks:
                hook.on_document(connection, doc.record, records)

        self.registry.put(doc.record, doc.chunk_ids, also=also)
        report.enriched += 1

    def _forget_vanished(self, present: set[str]) -> int:
        """Take documents recognised earlier but no longer in the collection out of the registry (their graph
        facts with them); only recognised documents, never ones the assistant ingested itself."""
        removed = 0
        for document_id in [doc_id for doc_id in self.registry.attached_document_ids() if doc_id not in present]:

            def also(connection: Any, document_id: str = document_id) -> None:
                for hook in self.hooks:
                    hook.on_delete(connection, document_id)

            if self.registry.delete(document_id, also=also) is not None:
                removed += 1
        return removed

    # -- checks -----------------------------------------------------------------------------------------------------

    def check_embedding_model(self, found: list[RecognisedDocument]) -> None:
        """Raise `KnowledgeBaseUnavailable` (one sentence) when the collection's embeddings were not made by the
        configured embedding model: a few chunks are embedded again and compared with what is stored."""
        sample_ids = [doc.chunk_ids[0] for doc in found[:_SAMPLE] if doc.chunk_ids]
        stored = [chunk for chunk in self.index.fetch(sample_ids, with_embeddings=True) if chunk.embedding is not None]
        if not stored:
            raise KnowledgeBaseUnavailable(
                f"The collection {self.knowledge_base.collection!r} holds no embeddings; embed it with "
                f"{self.knowledge_base.embedding_model} (Haystack's SentenceTransformersDocumentEmbedder) first."
            )
        dimension = len(stored[0].embedding)
        if dimension != self.model.dimension:
            raise KnowledgeBaseUnavailable(
                f"The collection's embeddings have {dimension} dimensions but the embedding model "
                f"{self.knowledge_base.embedding_model} makes {self.model.dimension}; set EMBEDDING_MODEL to the "
                "model that embedded it."
            )
        ours = self.model.embed([chunk.content or "" for chunk in stored])
        theirs = np.asarray([chunk.embedding for chunk in stored], dtype=np.float32)
        theirs /= np.maximum(np.linalg.norm(theirs, axis=1, keepdims=True), 1e-12)
        agreement = float(np.median(np.sum(ours * theirs, axis=1)))
        if agreement < SAME_MODEL_COSINE:
            raise KnowledgeBaseUnavailable(
                f"The collection's embeddings were not made by {self.knowledge_base.embedding_model} (median cosine "
                f"{agreement:.2f} to its own embeddings of the same texts); set EMBEDDING_MODEL to the model that "
                "embedded it."
            )
