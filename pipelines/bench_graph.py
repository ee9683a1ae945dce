"""How much entity and fact extraction adds to ingestion, measured for `research bench` (target: at most 30%)."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from components.embedding import get_embedding_model
from components.graph.extraction import LanguageExtractor
from components.graph.postgres_store import PostgresGraphStore
from components.knowledge_base.factory import open_knowledge_base
from components.settings import get_settings
from ingest.demo import DEMO_CORPUS_DIR
from ingest.ingestor import Ingestor

TARGET = 0.30


def bench_extraction(out: Callable[[str], None], repeat_docs: int = 2) -> dict[str, Any]:
    """Ingest the demo corpus without the graph hook, then time extraction + graph writes on the same documents.

    The ratio is (extraction + graph write time) / (ingestion time without the graph), so it does not depend on
    the noise of two separate embedding runs.
    """
    get_embedding_model().embed(["warm up the model"])
    collection = f"bench_graph_{int(time.time())}"
    store = open_knowledge_base(collection=collection)
    graph = PostgresGraphStore(collection)
    # The knowledge base's embedding model, as ingestion's graph hook has it (`open_extractor`).
    extractor = LanguageExtractor(embedding_model=get_settings().embedding_model)
    try:
        with tempfile.TemporaryDirectory(prefix="ra-bench-graph-") as folder:
            files = []
            for copy in range(repeat_docs):
                for path in sorted(DEMO_CORPUS_DIR.iterdir()):
                    if path.is_file():
                        target = Path(folder) / f"{copy}-{path.name}"
                        target.write_text(path.read_text(encoding="utf-8") + f"\n\nCopy {copy}.\n", encoding="utf-8")
                        files.append(target)
            ingestor = Ingestor(store=store, hooks=[])
            ingestor.warm_up()  # what happens once per process (and data folder), not per document: not timed
            started = time.perf_counter()
            report = ingestor.ingest_paths(files)
            ingest_s = time.perf_counter() - started
        # The chunks as ingestion hands them to the graph hook: with their in-context sentence vectors.
        found = [store.get_document(document_id, with_evidence=True) for document_id in report.document_ids.values()]
        documents = [item for item in found if item]
        chunks = sum(len(found[1]) for found in documents)
        extract_s = write_s = 0.0
        facts = 0
        for document, chunk_records in documents:
            started = time.perf_counter()
            extracted = extractor.extract(document, chunk_records, known_names=graph.known_names)
            extract_s += time.perf_counter() - started
            started = time.perf_counter()
            graph.replace_document(extracted)
            write_s += time.perf_counter() - started
            facts += len(extracted.facts)
    finally:
        graph.drop()
        store.drop()
    overhead = (extract_s + write_s) / ingest_s if ingest_s else 0.0
    per_chunk = 1000.0 * extract_s / chunks if chunks else 0.0
    write_per_chunk = 1000.0 * write_s / chunks if chunks else 0.0
    out(f"ingestion without the graph: {report.chunks_written} chunks in {ingest_s:.1f} s")
    out(f"extraction: {per_chunk:.2f} ms/chunk, graph writes: {write_per_chunk:.2f} ms/chunk, {facts} facts")
    out(
        f"graph overhead on ingestion: {overhead:.1%} (target <= {TARGET:.0%}) "
        f"{'PASS' if overhead <= TARGET else 'FAIL'}"
    )
    return {
        "chunks": chunks,
        "facts": facts,
        "extraction_ms_per_chunk": round(per_chunk, 3),
        "graph_write_ms_per_chunk": round(write_per_chunk, 3),
        "overhead": round(overhead, 4),
        "target": TARGET,
        "pass": overhead <= TARGET,
    }
