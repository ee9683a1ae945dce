"""`research bench --backend ...`: the knowledge-base backends side by side, each against numpy in the same run.

For each size N a synthetic knowledge base is built once and written into every chosen backend: N random unit
vectors (384 dimensions, seeded) and generated text of about 80 words per chunk drawn from a Zipf-distributed
vocabulary, ten chunks per document. The vectors are synthetic because embedding 100k real chunks takes hours on
two cores; search cost depends on the index, the row count and the dimension, not on what the vectors mean.

Reported per backend: write throughput (chunks/s through `upsert_document`, plus the time until the engine answers
at full speed: pgvector's HNSW build, Milvus's flush and background compaction), dense and keyword query p50/p95
(top 10, through the store interface, with attribution), their ratios to the numpy floors measured on the same data
in the same run (dense: brute-force matrix product; keyword: BM25 over a numpy inverted index), and dense recall@10
against the exact answer.

pgvector's writes have a floor of their own, measured in the same run and interleaved with them document by document
(so both see the same load): the same rows (id, content, meta, embedding) COPY'd in binary into a bare table (no key,
no index) with the same vector type on the same server, one COPY per document, commits not waiting for the WAL flush
as ours do. `write_vs_floor` is our write time over the floor's, `ready_vs_floor` adds the seal (the index builds).
"""

from __future__ import annotations

import math
import shutil
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from components.knowledge_base.chunk_index import record_to_document
from components.knowledge_base.factory import document_store_for, knowledge_base_for
from components.knowledge_base.keyword_terms import terms
from components.knowledge_base.store import ChunkRecord, DocumentRecord, KnowledgeBaseUnavailable
from components.settings import get_settings
from components.text import bm25
from pipelines.evaluation.metrics import percentile

Out = Callable[[str], None]
DIMENSION = 384
TOP_K = 10
CHUNKS_PER_DOCUMENT = 10
WORDS_PER_CHUNK = 80
VOCABULARY = 20_000
BACKENDS = ("pgvector", "milvus", "qdrant")


def _vocabulary(rng: np.random.Generator) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "fen", "gal", "hux", "jin"]
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(syllables, size=int(rng.integers(2, 5)))))
    return sorted(words)


class KeywordFloor:
    """BM25 over a numpy inverted index of chunks' term counts: the exact keyword search every backend's keyword
    search is measured against (its top 10 and their scores). `query_terms` analyses a query as the counts were."""

    def __init__(
        self, counts: list[dict[str, int]], query_terms: Callable[[str], list[str]], dtype: Any = np.float64
    ) -> None:
        self.size = len(counts)
        self.query_terms = query_terms
        self.dtype = dtype
        postings: dict[str, tuple[list[int], list[int]]] = {}
        lengths = np.asarray([sum(row.values()) for row in counts], dtype=dtype)
        for row, row_counts in enumerate(counts):
            for term, tf in row_counts.items():
                rows, tfs = postings.setdefault(term, ([], []))
                rows.append(row)
                tfs.append(tf)
        self.average_terms = float(lengths.mean()) if self.size else 1.0
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, (rows, tfs) in postings.items():
            index = np.asarray(rows, dtype=np.int64)
            tf = np.asarray(tfs, dtype=dtype)
            weights = bm25.idf(self.size, len(rows)) * bm25.term_weight(tf, lengths[index], self.average_terms)
            self._postings[term] = (index, np.asarray(weights, dtype=dtype))

    def top(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the top 10 chunks for the query's distinct terms, best first, and every row's score."""
        scores = np.zeros(self.size, dtype=self.dtype)
        for term in set(self.query_terms(query)):
            found = self._postings.get(term)
            if found is not None:
                np.add.at(scores, found[0], found[1])
        top = np.argpartition(-scores, TOP_K)[:TOP_K]
        return top[np.argsort(-scores[top], kind="stable")], scores


class SyntheticBase:
    """N chunks of synthetic vectors and text, their documents, the queries, and the numpy floors."""

    def __init__(self, size: int, queries: int, seed: int = 7) -> None:
        rng = np.random.default_rng(seed + size)
        self.size = size
        vectors = rng.standard_normal((size, DIMENSION), dtype=np.float32)
        self.vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        words = _vocabulary(rng)
        ranks = np.arange(1, len(words) + 1, dtype=np.float64)
        weights = 1.0 / ranks**1.1
        picks = rng.choice(len(words), size=(size, WORDS_PER_CHUNK), p=weights / weights.sum())
        self.texts = [" ".join(words[i] for i in row) for row in picks]
        # Dense queries sit near stored chunks (as real questions sit near their answers); keyword queries take
        # two mid-frequency words of a random chunk, so every query has matches.
        anchors = rng.integers(0, size, size=queries)
        noisy = self.vectors[anchors] + 0.05 * rng.standard_normal((queries, DIMENSION), dtype=np.float32)
        self.dense_queries = noisy / np.linalg.norm(noisy, axis=1, keepdims=True)
        self.keyword_queries = []
        rank = {word: index for index, word in enumerate(words)}
        for anchor in rng.integers(0, size, size=queries):
            chunk_words = sorted(set(terms(self.texts[anchor])), key=lambda w: rank.get(w, 0))
            middle = chunk_words[len(chunk_words) // 3 : len(chunk_words) // 3 + 2] or chunk_words[:2]
            self.keyword_queries.append(" ".join(middle))
        self._keyword = KeywordFloor([Counter(terms(text)) for text in self.texts], terms, dtype=np.float32)

    def numpy_dense(self, query: np.ndarray) -> np.ndarray:
        """The exact top 10 by cosine: the floor every dense search is measured against."""
        scores = self.vectors @ query
        top = np.argpartition(-scores, TOP_K)[:TOP_K]
        return top[np.argsort(-scores[top])]

    def numpy_keyword(self, query: str) -> np.ndarray:
        """The BM25 top 10 over a numpy inverted index: the keyword floor."""
        return self._keyword.top(query)[0]

    def documents(self) -> Any:
        """(DocumentRecord, chunks) pairs in ingestion order."""
        import datetime as dt

        for start in range(0, self.size, CHUNKS_PER_DOCUMENT):
            number = start // CHUNKS_PER_DOCUMENT
            document_id = f"bench-{number:06d}"
            document = DocumentRecord(
                document_id=document_id,
                title=f"Synthetic document {number}",
                source=f"bench/{document_id}.txt",
                doc_type=("pdf", "md", "html", "txt")[number % 4],
                content_hash=document_id,
                date=dt.date(2020, 1, 1) + dt.timedelta(days=number % 1500),
            )
            chunks = [
                ChunkRecord(
                    chunk_id=f"{document_id}:{i - start}",
                    document_id=document_id,
                    chunk_index=i - start,
                    text=self.texts[i],
                    embedding=self.vectors[i],
                )
                for i in range(start, min(start + CHUNKS_PER_DOCUMENT, self.size))
            ]
            yield document, chunks


def one_blas_thread() -> Any:
    """One BLAS thread for the numpy floor: on two shared cores, BLAS's own threads spin against each other
    (measured here: 23 ms for a 10k x 384 product with the default threads, 0.9 ms with one)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def _time(calls: list[Callable[[], Any]], warm: int = 3) -> tuple[list[float], list[Any]]:
    return timed(calls, calls[:warm])


def timed(calls: list[Callable[[], Any]], warm: list[Callable[[], Any]]) -> tuple[list[float], list[Any]]:
    """Milliseconds of each of `calls` and its result, after running the `warm` calls untimed."""
    for call in warm:
        call()
    timings, results = [], []
    for call in calls:
        started = time.perf_counter()
        results.append(call())
        timings.append((time.perf_counter() - started) * 1000.0)
    return timings, results


def _open(backend: str, collection: str, folder: Path) -> Any:
    settings = get_settings().model_copy(
        update={"milvus_uri": str(folder / "milvus" / "bench.db"), "qdrant_path": folder / "qdrant", "qdrant_url": None}
    )
    if backend in BACKENDS:
        store = document_store_for(settings.model_copy(update={"kb_backend": backend}), collection)
        return knowledge_base_for(store, embedding_model="synthetic")
    raise ValueError(f"unknown backend {backend!r}; choose {', '.join(BACKENDS)}")


class _CopyFloor:
    """The write floor of pgvector: each document's rows COPY'd into a bare table on the store's own server."""

    def __init__(self, store: Any) -> None:
        import psycopg
        from pgvector.psycopg import register_vector

        index = store.index
        self.table = f"{index.collection}_floor"
        self.conn = psycopg.connect(index.database_url, autocommit=True, options="-c synchronous_commit=off")
        register_vector(self.conn)
        self.vector_type = str(index.document_store.vector_type)
        self.conn.execute(
            f"CREATE TABLE {self.table} (id text, content text, meta jsonb, embedding {self.vector_type}({DIMENSION}))"
        )

    def write(self, document: Any, chunks: list) -> None:
        from psycopg.types.json import Jsonb

        with self.conn.cursor().copy(f"COPY {self.table} FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "jsonb", self.vector_type])
            for chunk in chunks:
                row = record_to_document(document, chunk, with_embedding=False)
                copy.write_row((row.id, row.content, Jsonb(row.meta), np.asarray(chunk.embedding, dtype=np.float32)))

    def close(self) -> None:
        self.conn.execute(f"DROP TABLE IF EXISTS {self.table}")
        self.conn.close()


def seal(store: Any, probe: np.ndarray, limit_s: float = 90.0) -> None:
    """What each engine needs after a bulk load before it answers at full speed, and the wait until it does."""
    # pgvector builds its indexes once, after the writes; Milvus flushes and waits for its index build.
    store.ensure_vector_index()
    if store.backend != "milvus":
        return
    # milvus-lite compacts and indexes in a background thread after a flush, invisibly to describe_index (searches
    # take 60-900 ms meanwhile, 7 ms after): wait until three searches in a row are as fast as the fastest seen.
    deadline = time.monotonic() + limit_s
    timings: list[float] = []
    while time.monotonic() < deadline:
        started = time.perf_counter()
        store.dense_search(probe, TOP_K)
        timings.append(time.perf_counter() - started)
        if len(timings) >= 3 and max(timings[-3:]) <= 1.5 * min(timings):
            return
        time.sleep(0.2)


def _bench_backend(backend: str, base: SyntheticBase, folder: Path, out: Out, floor: dict[str, float]) -> dict:
    collection = f"bench_{base.size}_{uuid.uuid4().hex[:6]}"
    store = _open(backend, collection, folder)
    copy_floor = _CopyFloor(store) if backend == "pgvector" else None
    try:
        write_s = floor_s = 0.0
        for document, chunks in base.documents():
            if copy_floor is not None:
                started = time.perf_counter()
                copy_floor.write(document, chunks)
                floor_s += time.perf_counter() - started
            started = time.perf_counter()
            store.upsert_document(document, chunks)
            write_s += time.perf_counter() - started
        started = time.perf_counter()
        seal(store, base.vectors[0])
        seal_s = time.perf_counter() - started
        dense_ms, dense_hits = _time([lambda q=q: store.dense_search(q, TOP_K) for q in base.dense_queries])
        keyword_ms, _ = _time([lambda q=q: store.keyword_search(q, TOP_K) for q in base.keyword_queries])
        recall = []
        for query, hits in zip(base.dense_queries, dense_hits, strict=True):
            exact = {f"bench-{i // CHUNKS_PER_DOCUMENT:06d}:{i % CHUNKS_PER_DOCUMENT}" for i in base.numpy_dense(query)}
            recall.append(len(exact & {hit.chunk.chunk_id for hit in hits}) / TOP_K)
        result = {
            "write_chunks_per_s": round(base.size / write_s, 1),
            "write_s": round(write_s, 2),
            "seal_s": round(seal_s, 2),
            "dense_p50_ms": round(percentile(dense_ms, 50, empty=math.nan), 2),
            "dense_p95_ms": round(percentile(dense_ms, 95, empty=math.nan), 2),
            "keyword_p50_ms": round(percentile(keyword_ms, 50, empty=math.nan), 2),
            "keyword_p95_ms": round(percentile(keyword_ms, 95, empty=math.nan), 2),
            "dense_recall_at_10": round(float(np.mean(recall)), 3),
        }
        for kind in ("dense", "keyword"):
            for q in ("p50", "p95"):
                result[f"{kind}_{q}_ratio"] = round(result[f"{kind}_{q}_ms"] / max(floor[f"{kind}_{q}_ms"], 1e-3), 1)
        out(
            f"  {backend:<9} write {result['write_chunks_per_s']:>8,.0f} chunks/s (+{seal_s:.1f} s seal) | dense p50 "
            f"{result['dense_p50_ms']:.1f} ms ({result['dense_p50_ratio']}x) p95 {result['dense_p95_ms']:.1f} ms "
            f"({result['dense_p95_ratio']}x) recall@10 {result['dense_recall_at_10']:.2f} | keyword p50 "
            f"{result['keyword_p50_ms']:.1f} ms ({result['keyword_p50_ratio']}x) p95 {result['keyword_p95_ms']:.1f} ms "
            f"({result['keyword_p95_ratio']}x)"
        )
        if copy_floor is not None:
            result["write_floor_chunks_per_s"] = round(base.size / floor_s, 1)
            result["write_vs_floor"] = round(write_s / floor_s, 2)
            result["ready_vs_floor"] = round((write_s + seal_s) / floor_s, 2)
            out(
                f"  {'COPY':<9} floor {result['write_floor_chunks_per_s']:>8,.0f} chunks/s (the same rows into a bare "
                f"table): pgvector writes take {result['write_vs_floor']}x its time, {result['ready_vs_floor']}x with "
                "the seal"
            )
        return result
    finally:
        drop = getattr(store, "drop", None)
        try:
            if copy_floor is not None:
                copy_floor.close()
            if callable(drop):
                drop()
        finally:
            store.close()


def bench_backends(backends: list[str], sizes: list[int], queries: int, out: Callable[[str], None]) -> dict:
    """Query p50/p95 (dense and keyword) and write throughput of each backend at each size, with numpy ratios.

    Returns `{"vectors": "synthetic ...", "sizes": {N: {"numpy": {...}, backend: {...}}}}`; a backend that cannot
    run (for example a locked milvus-lite folder) is reported with its one-sentence `error`.
    """
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown:
        raise ValueError(f"unknown backend {', '.join(unknown)}; choose {', '.join(BACKENDS)}")
    if not sizes or min(sizes) < TOP_K * 10:
        raise ValueError(f"sizes must be at least {TOP_K * 10} chunks")
    queries = max(10, int(queries))
    report: dict[str, Any] = {
        "vectors": f"synthetic: random unit vectors ({DIMENSION}-d) and generated text; embedding them for real "
        "would take hours on two cores",
        "top_k": TOP_K,
        "queries": queries,
        "sizes": {},
    }
    folder = Path(tempfile.mkdtemp(prefix="bench-", dir=get_settings().data_dir))
    try:
        for size in sizes:
            started = time.perf_counter()
            base = SyntheticBase(size, queries)
            built = time.perf_counter() - started
            out(f"{size:,} chunks (synthetic, built in {built:.1f} s), {queries} queries, top {TOP_K}")
            with one_blas_thread():
                dense_ms, _ = _time([lambda q=q, b=base: b.numpy_dense(q) for q in base.dense_queries])
                keyword_ms, _ = _time([lambda q=q, b=base: b.numpy_keyword(q) for q in base.keyword_queries])
            floor = {
                "dense_p50_ms": round(percentile(dense_ms, 50, empty=math.nan), 3),
                "dense_p95_ms": round(percentile(dense_ms, 95, empty=math.nan), 3),
                "keyword_p50_ms": round(percentile(keyword_ms, 50, empty=math.nan), 3),
                "keyword_p95_ms": round(percentile(keyword_ms, 95, empty=math.nan), 3),
            }
            out(
                f"  {'numpy':<9} floor                              | dense p50 {floor['dense_p50_ms']:.2f} ms p95 "
                f"{floor['dense_p95_ms']:.2f} ms | keyword p50 {floor['keyword_p50_ms']:.2f} ms p95 "
                f"{floor['keyword_p95_ms']:.2f} ms"
            )
            row: dict[str, Any] = {"numpy": floor}
            for backend in backends:
                try:
                    row[backend] = _bench_backend(backend, base, folder, out, floor)
                except KnowledgeBaseUnavailable as exc:
                    row[backend] = {"error": str(exc)}
                    out(f"  {backend:<9} skipped: {exc}")
            report["sizes"][size] = row
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return report
