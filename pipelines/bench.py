"""`research bench`: speed targets measured as ratios against a floor in the same run.

- Ingestion: chunks/s of the whole ingestion path (convert, split, embed, write) against the embedder alone on the
  same chunks. Target: at least 0.8.
- Research query: p50/p95 of the full research pipeline against the floor (query embedding plus the raw store
  searches for the same queries) at a knowledge base of N chunks. Target: p50 at most 1.5x.

Embedding 10,000 chunks for real takes over ten minutes on two cores, so the large base is built from a few hundred
really embedded chunks: every further chunk recombines real sentences and takes a real embedding with a little
noise. Search cost depends on the index and the row count, not on what the vectors mean; the report says so.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from components.embedding import get_embedding_model
from components.knowledge_base.factory import open_knowledge_base
from components.knowledge_base.store import ChunkRecord, DocumentRecord
from components.settings import get_settings
from components.text.analyzer import SENTENCE_TERMS_KEY, sentence_terms_record, term_counts
from components.text.language import SENTENCE_SPANS_KEY, sentence_spans
from ingest.benchmark import measure_ingestion
from ingest.demo import DEMO_CORPUS_DIR
from pipelines.catalog import PipelineCatalog
from pipelines.evaluation.metrics import percentile

Out = Callable[[str], None]


def _demo_texts() -> list[tuple[str, str]]:
    """(title, text) of every demo document, as plain text."""
    texts = []
    for path in sorted(DEMO_CORPUS_DIR.iterdir()):
        if path.is_file() and path.suffix in {".md", ".txt", ".html"}:
            texts.append((path.stem.replace("-", " ").replace("_", " "), path.read_text(encoding="utf-8")))
    return texts


def _demo_sentences() -> list[str]:
    """The sentences of the demo documents, as the product's language analysis cuts them."""
    return [" ".join(text[s:e].split()) for _, text in _demo_texts() for s, e in sentence_spans(text)]


def _join_sentences(sentences: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """A chunk text made of `sentences` and their spans in it (known by construction: nothing to parse)."""
    spans, start = [], 0
    for sentence in sentences:
        spans.append((start, start + len(sentence)))
        start += len(sentence) + 1
    return " ".join(sentences), spans


def bench_ingestion(out: Out, target_chunks: int = 300, rounds: int = 3) -> dict[str, Any]:
    """Ingestion throughput (the whole path, graph extraction included) against the embedder alone, same chunks."""
    store = open_knowledge_base(get_settings(), collection=f"bench_ingest_{int(time.time())}")
    try:
        result = measure_ingestion(store, target_chunks=target_chunks, rounds=rounds)
    finally:
        _drop_collection(store)
    ratio = result.ratio
    out(f"ingestion: {result.summary()}")
    out(f"ingestion / embedder-only: {ratio:.2f} (target >= 0.80) {'PASS' if ratio >= 0.8 else 'FAIL'}")
    return {
        "chunks": result.chunks,
        "ingest_chunks_per_s": round(result.ingest_chunks_per_s, 2),
        "embedder_chunks_per_s": round(result.embedder_chunks_per_s, 2),
        "embedder_busy": round(result.embedder_busy, 3),
        "ratio": round(ratio, 3),
        "target": 0.8,
        "pass": ratio >= 0.8,
    }


def _drop_collection(store: Any) -> None:
    drop = getattr(store, "drop", None)
    if callable(drop):
        drop()


def _synthetic_base(store: Any, n_chunks: int, out: Out, seed: int = 7) -> None:
    """Fill `store` with `n_chunks` chunks built from real sentences and real embeddings (see the module doc).

    Every chunk carries what ingestion stores: its vector, its sentences' in-context vectors and its term counts,
    so the ranker does its full per-question work.
    """
    rng = random.Random(seed)
    model = get_embedding_model()
    sentences = [s for s in _demo_sentences() if len(s.split()) >= 6]
    base_size = min(400, n_chunks)
    base_chunks = [_join_sentences(rng.sample(sentences, k=min(6, len(sentences)))) for _ in range(base_size)]
    base_texts = [text for text, _ in base_chunks]
    out(f"embedding {base_size} real base chunks…")
    base_vectors, base_sentence_vectors, base_spans = model.embed_with_sentence_spans(
        base_texts, [spans for _, spans in base_chunks], batch_size=32
    )
    pool = np.concatenate([rows for rows in base_sentence_vectors if len(rows)])
    np_rng = np.random.default_rng(seed)

    def noisy(vectors: np.ndarray) -> np.ndarray:
        vectors = vectors + np_rng.normal(0, 0.03, size=vectors.shape).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)

    chunks_per_doc = 10
    written = 0
    doc_index = 0
    started = time.perf_counter()
    while written < n_chunks:
        doc_id = f"bench-{doc_index:06d}"
        title = f"Bench document {doc_index}"
        count = min(chunks_per_doc, n_chunks - written)
        records = []
        for index in range(count):
            position = written + index
            base = position % base_size
            if position < base_size:
                text, vector = base_texts[base], base_vectors[base]
                spans, sentence_vectors = base_spans[base], base_sentence_vectors[base]
            else:
                text, spans = _join_sentences(rng.sample(sentences, k=min(6, len(sentences))))
                vector = noisy(base_vectors[base])
                sentence_vectors = noisy(pool[np_rng.integers(0, len(pool), size=len(spans))])
            records.append(
                ChunkRecord(
                    chunk_id=f"{doc_id}:{index}",
                    document_id=doc_id,
                    chunk_index=index,
                    text=text,
                    embedding=vector,
                    metadata={
                        SENTENCE_SPANS_KEY: [[start, end] for start, end in spans],
                        SENTENCE_TERMS_KEY: sentence_terms_record(text, spans),
                    },
                    sentence_spans=list(spans),
                    sentence_embeddings=sentence_vectors,
                    term_counts=term_counts(f"{title}\n{text}"),
                )
            )
        document = DocumentRecord(
            document_id=doc_id,
            title=title,
            source=f"bench://{doc_id}",
            doc_type="txt",
            content_hash=hashlib.sha256(doc_id.encode()).hexdigest(),
            text="",
            date=dt.date(2000, 1, 1) + dt.timedelta(days=doc_index % 9000),
        )
        store.upsert_document(document, records)
        written += count
        doc_index += 1
        if doc_index % 200 == 0:
            out(f"  {written}/{n_chunks} chunks written ({written / (time.perf_counter() - started):.0f}/s)")
    finish = getattr(store, "ensure_vector_index", None)
    if callable(finish):
        out("building the vector index…")
        finish()


def bench_questions(n_queries: int = 60) -> list[str]:
    """The query benchmark's questions: six words of a demo sentence each, the same for a given count every run."""
    rng = random.Random(11)
    sentences = [s for s in _demo_sentences() if 6 <= len(s.split()) <= 30]
    queries = []
    for sentence in rng.sample(sentences, k=min(n_queries, len(sentences))):
        words = sentence.rstrip(".").split()
        start = rng.randint(0, max(0, len(words) - 6))
        queries.append("What about " + " ".join(words[start : start + 6]) + "?")
    return queries


def bench_collection(n_chunks: int) -> str:
    """The collection the query benchmark's base of `n_chunks` chunks lives in; what answers its questions outside the
    benchmark (`scripts/replay_bench_questions.py`) reads the same one. The version changes with what the base holds
    (v3: chunks in the integration's document store, documents in the registry; v4: their sentence terms stored)."""
    return f"bench_v4_{n_chunks}"


def bench_queries(out: Out, n_chunks: int = 10_000, n_queries: int = 60) -> dict[str, Any]:
    """Full research-pipeline latency against query embedding + raw store searches at `n_chunks`."""
    settings = get_settings()
    collection = bench_collection(n_chunks)
    store = open_knowledge_base(settings, collection=collection)
    have = store.count_chunks()
    if have != n_chunks:
        if have:
            _drop_collection(store)
            store = open_knowledge_base(settings, collection=collection)
        out(f"building a knowledge base of {n_chunks} chunks in collection {collection!r}…")
        _synthetic_base(store, n_chunks, out)
    else:
        out(f"reusing the knowledge base of {n_chunks} chunks in collection {collection!r}")

    queries = bench_questions(n_queries)
    model = get_embedding_model()
    catalog = _catalog_for(collection)
    # The floor makes the very searches the pipeline makes: same queries, same depths.
    components = catalog.spec("research").pipeline["components"]
    dense_limit = int(components["kb_dense"]["init_parameters"].get("limit") or 10)
    keyword_limit = int(components["kb_keyword"]["init_parameters"].get("limit") or 10)
    # Warm both paths so neither pays for first-call set-up.
    for query in queries[:3]:
        catalog.research(query, sources=["kb"])
        store.dense_search(model.embed_one(query), dense_limit)
    if not wait_for_keyword_memory(store):
        out("the keyword search's in-memory postings did not load in time: early questions are scored on the database")

    floor_ms: list[float] = []
    full_ms: list[float] = []
    for query in queries:
        started = time.perf_counter()
        vector = model.embed([query])[0]  # uncached: the floor pays for its forward pass
        store.dense_search(vector, dense_limit)
        store.keyword_search(query, keyword_limit, query_embedding=vector)
        floor_ms.append((time.perf_counter() - started) * 1000)

        model.clear_query_cache()  # and so does the pipeline
        started = time.perf_counter()
        catalog.research(query, sources=["kb"])
        full_ms.append((time.perf_counter() - started) * 1000)

    floor_p50, floor_p95 = percentile(floor_ms, 50, empty=math.nan), percentile(floor_ms, 95, empty=math.nan)
    full_p50, full_p95 = percentile(full_ms, 50, empty=math.nan), percentile(full_ms, 95, empty=math.nan)
    ratio = full_p50 / floor_p50 if floor_p50 else float("inf")
    out(
        f"floor (query embedding + dense top {dense_limit} + keyword top {keyword_limit}), {len(queries)} queries: "
        f"p50 {floor_p50:.1f} ms, p95 {floor_p95:.1f} ms"
    )
    out(
        f"research pipeline (kb dense + keyword, fusion, ranking, answer): p50 {full_p50:.1f} ms, p95 {full_p95:.1f} ms"
    )
    out(f"research p50 / floor p50: {ratio:.2f} (target <= 1.50) {'PASS' if ratio <= 1.5 else 'FAIL'}")
    return {
        "chunks": n_chunks,
        "queries": len(queries),
        "floor_p50_ms": round(floor_p50, 2),
        "floor_p95_ms": round(floor_p95, 2),
        "research_p50_ms": round(full_p50, 2),
        "research_p95_ms": round(full_p95, 2),
        "ratio_p50": round(ratio, 3),
        "ratio_p95": round(full_p95 / floor_p95, 3) if floor_p95 else None,
        "target": 1.5,
        "pass": ratio <= 1.5,
        "note": "large base built from real embedded chunks plus noise (see `research bench --help`)",
        "spread_ms": round(statistics.pstdev(full_ms), 2),
    }


def wait_for_keyword_memory(store: Any, timeout_s: float = 120.0) -> bool:
    """Wait until keyword search answers from its in-memory postings, where the backend keeps them (pgvector): the
    copy loads in the background after the first search, and until then the first questions (the floor's and the
    pipeline's alike) are scored on the database. The copy is one per database and collection in the process, so
    the pipeline's searches share it. False when a load was still running at the timeout."""
    memory = getattr(getattr(store, "index", None), "keyword_memory", None)
    return True if memory is None else memory.wait(timeout_s)


def _catalog_for(collection: str) -> Any:
    """A fresh catalog whose knowledge-base and graph components read `collection`: its own settings name it (the
    process's settings stay as they are)."""
    return PipelineCatalog(settings=get_settings().model_copy(update={"kb_collection": collection}))
