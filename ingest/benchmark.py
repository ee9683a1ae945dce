"""How close ingestion comes to the embedder's own speed on the same chunks.

Embedding is the slow stage (about 14 chunks/s on two CPU cores); reading, converting, splitting and writing
overlap with it, so a healthy ingestion runs at nearly the embedder's rate. `measure_ingestion` ingests copies of
the demo corpus under fresh sources and embeds the very same chunk texts with the bare model, and reports both.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from components.ingestion.formats import convert_bytes
from components.knowledge_base.knowledge_base import KnowledgeBase
from ingest.demo import demo_items
from ingest.ingestor import IngestItem, Ingestor


@dataclass
class IngestionThroughput:
    """Chunks per second of the whole ingestion and of the embedder alone, on the same chunks."""

    chunks: int
    ingest_chunks_per_s: float
    embedder_chunks_per_s: float
    embedder_busy: float  # share of the ingestion's time the embedder was working

    @property
    def ratio(self) -> float:
        return self.ingest_chunks_per_s / self.embedder_chunks_per_s if self.embedder_chunks_per_s else 0.0

    def summary(self) -> str:
        return (
            f"{self.chunks} chunks: ingestion {self.ingest_chunks_per_s:.1f} chunks/s, embedder alone "
            f"{self.embedder_chunks_per_s:.1f} chunks/s ({self.ratio:.2f}x); embedder busy {self.embedder_busy:.0%} "
            "of the ingestion"
        )


def measure_ingestion(store: KnowledgeBase, target_chunks: int = 300, rounds: int = 3) -> IngestionThroughput:
    """Ingest about `target_chunks` chunks (copies of the demo corpus) into `store`, and embed the same chunk texts
    with the bare model, in `rounds` alternating rounds (ingest first, then embed first, ...) so that a machine
    whose load drifts during the measurement treats both alike.

    The copies are removed from `store` afterwards; use a scratch collection all the same.
    """
    if target_chunks < 1:
        raise ValueError(f"target_chunks must be at least 1, not {target_chunks!r}")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds!r}")
    ingestor = Ingestor(store=store, hooks=[])
    ingestor.warm_up()
    run = uuid.uuid4().hex[:8]
    items: list[IngestItem] = []
    texts: list[list[str]] = []
    total = 0
    copy = 0
    while total < target_chunks:
        for item in demo_items():
            data = item.read()
            chunks = ingestor.splitter.split(convert_bytes(data, item.filename))
            source = f"bench-{run}-{copy}:{item.filename}"
            items.append(IngestItem(source=source, filename=item.filename, data=data))
            texts.append([c.text for c in chunks])
            total += len(chunks)
            if total >= target_chunks:
                break
        copy += 1
    groups = [list(range(len(items)))[r::rounds] for r in range(rounds)]
    ingest_seconds = embed_seconds = embedding_busy = 0.0
    written = 0
    document_ids: list[str] = []
    model = ingestor.model
    try:
        for number, group in enumerate(groups):
            if not group:
                continue
            for step in ("ingest", "embed") if number % 2 == 0 else ("embed", "ingest"):
                if step == "ingest":
                    report = ingestor.ingest_items([items[i] for i in group])
                    ingest_seconds += report.seconds
                    written += report.chunks_written
                    embedding_busy += report.embedding_seconds
                    document_ids += list(report.document_ids.values())
                else:
                    started = time.perf_counter()
                    model.embed([t for i in group for t in texts[i]], batch_size=ingestor.batch_size)
                    embed_seconds += time.perf_counter() - started
    finally:
        for document_id in document_ids:
            store.delete_document(document_id)
    return IngestionThroughput(
        chunks=written,
        ingest_chunks_per_s=written / ingest_seconds if ingest_seconds > 0 else 0.0,
        embedder_chunks_per_s=total / embed_seconds if embed_seconds > 0 else 0.0,
        embedder_busy=min(1.0, embedding_busy / ingest_seconds) if ingest_seconds > 0 else 0.0,
    )
