"""`research bench --only scale`: search at 10k, 30k and 100k chunks of real text, per backend.

The knowledge bases are built from `ScaleCorpus` (the public sets' paragraphs and the demo corpus, recombined into
more documents when there are not enough; see `pipelines.scale_corpus`), once: they stay in the data folder
(`bench-scale/`, with a manifest), and a rerun only measures. Chunks whose real embedding is cached get it; the
others get a composed vector (labelled `composed` in the report, see `pipelines.scale_corpus`). When more real
embeddings exist than when a base was built, only the documents whose chunks changed are written again.

Reported per size and backend: dense / keyword / hybrid / research p50 and p95 (top 10, real questions of the
sets), recall@10 of dense against the exact cosine top 10 (numpy) and of keyword against an exact BM25 over the
same term counts (numpy, every chunk scored), build time (writes, then the index builds) and size on disk. On
pgvector also: dense at several `hnsw.ef_search` values and exact (no index), and keyword by the alternatives
(`ts_rank` over the stored tsvectors, BM25 over every posting of the question's terms, the cut-off run from the
client a statement per step and as the one statement in use, and an in-memory inverted index in numpy, which is
also the exact reference).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import random
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from components.embedding import get_embedding_model
from components.knowledge_base import close_knowledge_bases
from components.knowledge_base.factory import document_store_for, knowledge_base_for
from components.knowledge_base.search import KnowledgeBaseSearch
from components.knowledge_base.store import ChunkRecord, DocumentRecord, KnowledgeBaseUnavailable
from components.settings import Settings, get_settings
from components.text.analyzer import term_counts, terms
from ingest.demo import DEMO_CORPUS_DIR
from pipelines.bench_backends import KeywordFloor, one_blas_thread, seal, timed
from pipelines.catalog import PipelineCatalog
from pipelines.evaluation.charts import new_chart, save_chart
from pipelines.evaluation.metrics import percentile
from pipelines.scale_corpus import CHUNKS_PER_DOCUMENT, EmbeddingCache, ScaleCorpus, corpus_questions, eval_data_dir

Out = Callable[[str], None]
SIZES = (10_000, 30_000, 100_000)
BACKENDS = ("pgvector", "milvus", "qdrant")
TOP_K = 10
EF_SEARCH = (40, 64, 100, 200)
WARM = 3
WRITERS = 3


class ScaleBase:
    """The first `size` chunks of the corpus with their vectors (real or composed), term counts and the exact
    answers to compare with."""

    def __init__(self, prepared: list[tuple], size: int) -> None:
        self.size = size
        self.chunks = [item[:3] for item in prepared[:size]]
        self.vectors = np.stack([item[4] for item in prepared[:size]])
        self.real = sum(int(item[5]) for item in prepared[:size])
        self.counts: list[dict[str, int]] = [item[3] for item in prepared[:size]]
        self._keyword = KeywordFloor(self.counts, terms)
        self.average_terms = self._keyword.average_terms

    def chunk_id(self, number: int) -> str:
        return f"scale-{number // CHUNKS_PER_DOCUMENT:06d}:{number % CHUNKS_PER_DOCUMENT}"

    def exact_dense(self, query: np.ndarray) -> set[str]:
        scores = self.vectors @ query
        top = np.argpartition(-scores, TOP_K)[:TOP_K]
        return {self.chunk_id(int(i)) for i in top}

    def exact_bm25(self, query: str) -> list[tuple[str, float]]:
        """BM25 of every chunk for the question's distinct analyzer terms: the top 10 with their scores."""
        top, scores = self._keyword.top(query)
        return [(self.chunk_id(int(i)), float(scores[i])) for i in top if scores[i] > 0]

    def documents(self, first_chunk: int = 0, last_chunk: int | None = None) -> Iterator[tuple[Any, list[Any]]]:
        """(DocumentRecord, chunks) of the documents holding chunks `first_chunk` to `last_chunk` (exclusive; the
        end by default), in order."""
        start = (first_chunk // CHUNKS_PER_DOCUMENT) * CHUNKS_PER_DOCUMENT
        for first in range(start, self.size if last_chunk is None else last_chunk, CHUNKS_PER_DOCUMENT):
            number = first // CHUNKS_PER_DOCUMENT
            document_id = f"scale-{number:06d}"
            members = self.chunks[first : min(first + CHUNKS_PER_DOCUMENT, self.size)]
            document = DocumentRecord(
                document_id=document_id,
                title=members[0][0].title,
                source=f"scale://{document_id}",
                doc_type=("pdf", "md", "html", "txt")[number % 4],
                content_hash=f"{document_id}:{sum(1 for n in range(first, first + len(members)) if n < self.real)}",
                date=dt.date(2015, 1, 1) + dt.timedelta(days=number % 3000),
            )
            records = [
                ChunkRecord(
                    chunk_id=self.chunk_id(chunk.number),
                    document_id=document_id,
                    chunk_index=chunk.number - first,
                    text=chunk.text,
                    embedding=self.vectors[chunk.number],
                    sentence_spans=spans,
                    sentence_embeddings=sentence_vectors if len(spans) else None,
                    term_counts=self.counts[chunk.number],
                )
                for chunk, spans, sentence_vectors in members
            ]
            yield document, records


class StoredCounts:
    """The exact BM25 (numpy) over the term counts a knowledge base stores, for a base counted by an earlier analyzer:
    its keyword search is exact over those counts, so that is what its recall is measured against."""

    def __init__(self, chunk_ids: list[str], counts: list[dict[str, int]]) -> None:
        self.chunk_ids = chunk_ids
        self._keyword = KeywordFloor(counts, terms)
        self.average_terms = self._keyword.average_terms

    def exact_bm25(self, query: str) -> list[tuple[str, float]]:
        top, scores = self._keyword.top(query)
        return [(self.chunk_ids[int(i)], float(scores[i])) for i in top if scores[i] > 0]


def _keyword_reference(kb: Any, base: ScaleBase, out: Out) -> Any:
    """What a pgvector base's keyword recall is measured against: `base` (today's analyzer's counts, the ones a build
    writes), or, when the base stores counts an earlier analyzer made (its average length differs), the counts it
    stores (`StoredCounts`), said in one line."""
    statistics = kb.term_statistics([])
    if statistics is None or math.isclose(statistics.avg_terms, base.average_terms, rel_tol=1e-9):
        return base
    out(
        f"  pgvector: the base's term counts are an earlier analyzer's (average {statistics.avg_terms:.2f} terms a "
        f"chunk against {base.average_terms:.2f} today): keyword recall is measured against an exact BM25 over the "
        "counts it stores; a rebuild counts it again"
    )
    return _stored_counts(kb)


def _stored_counts(kb: Any) -> StoredCounts:
    """The exact BM25 over the term counts a pgvector base stores."""
    rows = kb.index.stored_term_counts()
    return StoredCounts([chunk_id for chunk_id, _ in rows], [counts for _, counts in rows])


def _prepare(corpus: ScaleCorpus, cache: EmbeddingCache, size: int, out: Out) -> list[tuple]:
    """Per chunk up to `size`: (chunk, sentence spans with vectors, their vectors, term counts, vector, real?), the
    term counts as ingestion counts them (title and text)."""
    prepared = []
    started = time.monotonic()
    for number in range(size):
        chunk = corpus.chunk(number)
        vector, spans, sentence_vectors, real = cache.vectors(chunk)
        prepared.append((chunk, spans, sentence_vectors, term_counts(f"{chunk.title}\n{chunk.text}"), vector, real))
        if (number + 1) % 20_000 == 0:
            out(f"  prepared {number + 1:,}/{size:,} chunks ({time.monotonic() - started:.0f} s)")
    return prepared


def _settings_for(backend: str, folder: Path, collection: str) -> Settings:
    """The process's settings with a scale base's backend, local folders and collection: what its knowledge base and
    the catalog measuring it are built with (the process's settings stay as they are)."""
    return get_settings().model_copy(
        update={
            "kb_backend": backend,
            "milvus_uri": str(folder / "milvus" / "scale.db"),
            "qdrant_path": folder / "qdrant",
            "kb_collection": collection,
        }
    )


def _open(settings: Settings) -> Any:
    return knowledge_base_for(document_store_for(settings))


def _disk_size(kb: Any, folder: Path) -> dict[str, float]:
    """Megabytes on disk: the whole collection, and (pgvector) its keyword postings alone."""
    if kb.index.backend == "pgvector":
        with kb.registry.connection() as conn:
            total, postings = conn.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) FILTER (WHERE true), "
                "sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname LIKE %s) "
                "FROM pg_class c WHERE c.relkind = 'r' AND c.relname LIKE %s",
                (f"{kb.collection}_postings%", f"{kb.collection}%"),
            ).fetchone()
        return {"size_mb": round(float(total or 0) / 1e6, 1), "postings_mb": round(float(postings or 0) / 1e6, 1)}
    sub = folder / ("milvus" if kb.index.backend == "milvus" else "qdrant")
    size = sum(path.stat().st_size for path in sub.rglob("*") if path.is_file()) if sub.exists() else 0
    return {"size_mb": round(size / 1e6, 1)}


def _build(
    kb: Any, base: ScaleBase, entry: dict, out: Out, save: Callable[[dict], None], settings: Settings
) -> tuple[Any, dict]:
    """Write the base into `kb`: all of it, the rest of an interrupted build, or the documents whose vectors became
    real since the last build (`entry`, the manifest's record, is saved through `save` as the writes progress); the
    knowledge base (reopened if it had to be emptied) and the new entry."""
    have = kb.count_chunks()
    built = entry.get("chunks") == base.size and have == base.size
    if built and entry.get("real") == base.real:
        out(f"  {kb.index.backend}: reusing {have:,} chunks ({base.real:,} real embeddings)")
        return kb, entry
    if built:  # the documents holding chunks that now have a real embedding
        first, last, previous = int(entry.get("real", 0)), base.real, entry.get("build_s")
    elif entry.get("building") == base.size and have:
        first, last, previous = int(entry.get("done", 0)), base.size, None
        out(f"  {kb.index.backend}: resuming the build at chunk {first:,}")
    else:
        if have:
            kb.drop()
            kb.close()
            kb = _open(settings)
        first, last, previous = 0, base.size, None
    entry = {**entry, "building": base.size, "done": first} if not built else entry
    save(entry)
    documents = list(base.documents(first, last))
    total = sum(len(chunks) for _, chunks in documents)
    out(f"  {kb.index.backend}: writing {total:,} chunks…")
    started = time.monotonic()
    written = 0
    # A few writers at once: each document's write waits on the server most of the time.
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        for number, _ in enumerate(pool.map(lambda pair: kb.upsert_document(*pair), documents)):
            written += len(documents[number][1])
            if (number + 1) % 500 == 0:
                rate = written / max(time.monotonic() - started, 1e-9)
                out(f"    {written:,}/{total:,} chunks ({rate:,.0f}/s, {(total - written) / rate:,.0f} s left)")
                if not built:
                    save({**entry, "done": (first // CHUNKS_PER_DOCUMENT + number + 1) * CHUNKS_PER_DOCUMENT})
    write_s = time.monotonic() - started
    started = time.monotonic()
    out(f"  {kb.index.backend}: building indexes…")
    seal(kb, base.vectors[0])
    seal_s = time.monotonic() - started
    entry = {
        "chunks": base.size,
        "real": base.real,
        "written": total,
        "write_s": round(write_s, 1),
        "seal_s": round(seal_s, 1),
        "chunks_per_s": round(total / max(write_s, 1e-9), 1),
        # A partial rewrite or a resumed build keeps the first build's time when there was one.
        "build_s": previous if previous is not None else round(write_s + seal_s, 1),
    }
    save(entry)
    out(f"  {kb.index.backend}: {total:,} chunks written in {write_s:.0f} s, indexes in {seal_s:.0f} s")
    return kb, entry


def _summary(name: str, timings: list[float]) -> dict[str, float]:
    return {
        f"{name}_p50_ms": round(percentile(timings, 50, empty=math.nan), 2),
        f"{name}_p95_ms": round(percentile(timings, 95, empty=math.nan), 2),
    }


def _dense_recall(base: ScaleBase, vectors: list[np.ndarray], hits: list[list[Any]]) -> float:
    """Recall@10 of dense hits against the exact cosine top 10."""
    pairs = zip(vectors, hits, strict=True)
    found = [len(base.exact_dense(vector) & {h.chunk.chunk_id for h in hit}) / TOP_K for vector, hit in pairs]
    return round(float(np.mean(found)), 3)


def _keyword_recall(reference: Any, queries: list[str], hits: list[list[tuple[str, float]]]) -> float:
    """Recall@10 against the exact BM25 of `reference` (a `ScaleBase` or `StoredCounts`): a returned chunk counts when
    it is in the exact top 10, or scores as much as the exact 10th (a tie)."""
    recalls = []
    for query, found in zip(queries, hits, strict=True):
        exact = reference.exact_bm25(query)
        if not exact:
            continue
        wanted = {chunk_id for chunk_id, _ in exact}
        floor = exact[-1][1]
        good = sum(1 for chunk_id, score in found[:TOP_K] if chunk_id in wanted or score >= floor - 1e-9)
        recalls.append(min(good, len(exact)) / len(exact))
    return round(float(np.mean(recalls)), 3) if recalls else float("nan")


def _pgvector_alternatives(
    kb: Any, base: ScaleBase, queries: list[str], vectors: list[np.ndarray], reference: Any = None
) -> dict:
    """Dense at several ef_search values and exact; keyword by ts_rank, by every posting, and by the cut-off (run
    from the client a statement per step, and as the one statement the index sends); the index's own calls, without
    the knowledge base's document lookup."""
    index = kb.index
    result: dict[str, Any] = {"dense": {}, "keyword": {}}
    saved = index.ef_search_min
    try:
        for ef in EF_SEARCH:
            index.ef_search_min = ef
            timings, hits = timed(
                [lambda v=v: kb.dense_search(v, TOP_K) for v in vectors],
                [lambda v=v: kb.dense_search(v, TOP_K) for v in vectors[:WARM]],
            )
            result["dense"][f"hnsw ef_search {ef}"] = {
                **_summary("dense", timings),
                "recall_at_10": _dense_recall(base, vectors, hits),
            }
    finally:
        index.ef_search_min = saved

    def exact(vector: np.ndarray) -> list[str]:
        return index.exact_nearest(vector, TOP_K)

    timings, _ = timed([lambda v=v: exact(v) for v in vectors], [lambda v=v: exact(v) for v in vectors[:WARM]])
    result["dense"]["exact (no index)"] = {**_summary("dense", timings), "recall_at_10": 1.0}

    def by_ts_rank(query: str) -> list[tuple[str, float]]:
        return [(chunk_id, float("-inf")) for chunk_id in index.keyword_by_ts_rank(query, TOP_K)]

    def every_posting(query: str) -> list[tuple[str, float]]:
        return index.keyword_every_posting(query, TOP_K)

    def cut_off_steps(query: str) -> list[tuple[str, float]]:
        """The cut-off run from the client, a statement per step, then the rows (the index's former path)."""
        return index.keyword_cut_off_steps(query, TOP_K)

    cap = index.keyword_index_max_postings

    def cut_off(query: str) -> list[tuple[str, float]]:
        index.keyword_index_max_postings = 0
        try:
            return [(hit.document.id, hit.raw_score) for hit in index.keyword(query, TOP_K)]
        finally:
            index.keyword_index_max_postings = cap

    def in_memory(query: str) -> list[tuple[str, float]]:
        return [(hit.document.id, hit.raw_score) for hit in index.keyword(query, TOP_K)]

    for name, call in (
        ("ts_rank (OR of lexemes)", by_ts_rank),
        ("BM25, every posting", every_posting),
        ("BM25, cut-off, a statement per step", cut_off_steps),
        ("BM25, cut-off, one statement", cut_off),
        ("BM25 in memory, generation checked, rows read", in_memory),
        ("BM25 in memory (numpy)", base.exact_bm25),
    ):
        timings, hits = timed(
            [lambda q=q, c=call: c(q) for q in queries], [lambda q=q, c=call: c(q) for q in queries[:WARM]]
        )
        result["keyword"][name] = {
            **_summary("keyword", timings),
            "recall_at_10": _keyword_recall(reference or base, queries, hits),
        }
    cpu = _server_cpu(index, queries)
    if cpu is not None:
        result["keyword"]["BM25, cut-off, one statement"].update(_summary("server_cpu", cpu))
    return result


def _server_cpu(index: Any, queries: list[str]) -> list[float] | None:
    """Milliseconds of CPU the database server spends on each question's keyword search function: what the search
    costs whatever else runs on the machine (wall time under load is mostly waiting for a core). Read from the
    server process's scheduler statistics, so only for a server on this machine (None otherwise)."""
    with index.keyword_function_session() as (backend_pid, search):
        stat = Path(f"/proc/{backend_pid}/schedstat")
        if not stat.exists():
            return None

        def used() -> float:
            return int(stat.read_text().split()[0]) / 1e6

        for query in queries[:WARM]:
            search(query, TOP_K)
        spent = []
        for query in queries:
            started = used()
            search(query, TOP_K)
            spent.append(used() - started)
    return spent


def _release_keyword_memory(kb: Any) -> None:
    """Let go of a measured base's in-memory keyword copy: the cap counts every copy in the process, so the next,
    larger base would otherwise be measured beside the smaller ones' copies (and, at 100k, on the database)."""
    memory = getattr(kb.index, "keyword_memory", None)
    if memory is not None:
        memory.forget()


def _load_keyword_memory(kb: Any, out: Out) -> dict[str, Any]:
    """Load a pgvector base's in-memory keyword index now (timed; what a process does in the background after
    warm-up), so that the questions measure it; its size."""
    index = kb.index
    started = time.perf_counter()
    copy = index.keyword_memory.load(index.keyword_index_max_postings)
    spent = time.perf_counter() - started
    if copy is None:
        out(f"  in-memory keyword index: not loaded (more than {index.keyword_index_max_postings:,} postings)")
        return {"keyword_memory": None}
    entry = {"load_s": round(spent, 1), "postings": copy.postings, "mb": round(copy.nbytes / 1e6, 1)}
    out(f"  in-memory keyword index: {copy.postings:,} postings, {entry['mb']} MB, loaded in {entry['load_s']} s")
    return {"keyword_memory": entry}


def _keyword_both_ways(kb: Any, queries: list[str], warm: list[str]) -> tuple[list, list, list, list]:
    """Keyword search through the knowledge base (rows included) from the in-memory index and on the database
    (the server-side function), question by question in turn, so that both meet the same load. Raises when a
    question meant for the in-memory index was answered on the database (a stale copy would measure the other)."""
    index = kb.index
    cap = index.keyword_index_max_postings
    answered: list[bool] = []  # per question: whether the in-memory index answered its search meant for it

    def on(limit: int) -> Callable[[str], Any]:
        def search(query: str) -> Any:
            index.keyword_index_max_postings = limit
            try:
                return kb.keyword_search(query, TOP_K)
            finally:
                index.keyword_index_max_postings = cap

        return search

    memory, database = on(cap), on(0)
    for query in warm:
        memory(query)
        database(query)
    timings: dict[str, list[float]] = {"memory": [], "database": []}
    hits: dict[str, list[Any]] = {"memory": [], "database": []}
    for query in queries:
        for name, call in (("memory", memory), ("database", database)):
            before = index.keyword_answers_from_memory
            started = time.perf_counter()
            hits[name].append(call(query))
            timings[name].append((time.perf_counter() - started) * 1000.0)
            if name == "memory" and terms(query):  # a question without terms is answered by neither
                answered.append(index.keyword_answers_from_memory > before)
    if cap > 0 and index.keyword_memory.current(cap) is not None and not all(answered):
        raise RuntimeError("the in-memory keyword index went stale while it was measured")
    return timings["memory"], hits["memory"], timings["database"], hits["database"]


def _measure(
    backend: str,
    kb: Any,
    base: ScaleBase,
    queries: list[str],
    vectors: list[np.ndarray],
    warm: list[str],
    out: Out,
    settings: Settings,
    reference: Any = None,
) -> dict:
    result: dict[str, Any] = {}
    warm_vectors = [get_embedding_model().embed_one(q) for q in warm]
    timings, hits = timed(
        [lambda v=v: kb.dense_search(v, TOP_K) for v in vectors],
        [lambda v=v: kb.dense_search(v, TOP_K) for v in warm_vectors],
    )
    result.update(_summary("dense", timings))
    result["dense_recall_at_10"] = _dense_recall(base, vectors, hits)
    if backend == "pgvector":
        timings, hits, on_database, on_database_hits = _keyword_both_ways(kb, queries, warm)
        result.update(_summary("keyword", timings))
        result.update(_summary("keyword_database", on_database))
        result["keyword_database_recall_at_10"] = _keyword_recall(
            reference or base, queries, [[(h.chunk.chunk_id, h.raw_score) for h in found] for found in on_database_hits]
        )
    else:
        timings, hits = timed(
            [lambda q=q: kb.keyword_search(q, TOP_K) for q in queries],
            [lambda q=q: kb.keyword_search(q, TOP_K) for q in warm],
        )
        result.update(_summary("keyword", timings))
    result["keyword_recall_at_10"] = _keyword_recall(
        reference or base,
        queries,
        [
            [(h.chunk.chunk_id, h.raw_score if h.score_kind.value == "bm25" else float("-inf")) for h in found]
            for found in hits
        ],
    )
    search = KnowledgeBaseSearch(document_store=kb.index.document_store, mode="hybrid", limit=TOP_K)
    search.warm_up()

    def hybrid(query: str, vector: np.ndarray) -> Any:
        return search.run(query=query, query_embedding=vector.tolist())

    timings, _ = timed(
        [lambda q=q, v=v: hybrid(q, v) for q, v in zip(queries, vectors, strict=True)],
        [lambda q=q, v=v: hybrid(q, v) for q, v in zip(warm, warm_vectors, strict=True)],
    )
    result.update(_summary("hybrid", timings))
    catalog = PipelineCatalog(settings=settings)  # its knowledge-base components read this base
    model = get_embedding_model()

    def research(query: str) -> Any:
        model.clear_query_cache()
        return catalog.research(query, sources=["kb"])

    timings, _ = timed([lambda q=q: research(q) for q in queries], [lambda q=q: research(q) for q in warm])
    result.update(_summary("research", timings))
    out(
        f"  {backend:<9} dense p50 {result['dense_p50_ms']:.1f} p95 {result['dense_p95_ms']:.1f} ms "
        f"(recall@10 {result['dense_recall_at_10']:.3f}) | keyword p50 {result['keyword_p50_ms']:.1f} "
        f"p95 {result['keyword_p95_ms']:.1f} ms (recall@10 {result['keyword_recall_at_10']:.3f})"
        + (
            f" [on the database p50 {result['keyword_database_p50_ms']:.1f} p95 {result['keyword_database_p95_ms']:.1f}"
            f" ms]"
            if "keyword_database_p50_ms" in result
            else ""
        )
        + f" | hybrid p95 "
        f"{result['hybrid_p95_ms']:.1f} ms | research p50 {result['research_p50_ms']:.0f} p95 "
        f"{result['research_p95_ms']:.0f} ms"
    )
    return result


def chart(report: dict, path: Path) -> Path:
    """p95 per mode against the base size, one line per backend (log scales), as a PNG."""
    modes = ("dense", "keyword", "hybrid", "research")
    figure, axes = new_chart(1, len(modes), figsize=(4 * len(modes), 3.6))
    sizes = sorted(int(size) for size in report["sizes"])
    for axis, mode in zip(axes, modes, strict=True):
        for backend in BACKENDS:
            points = [(size, report["sizes"][size].get(backend, {}).get(f"{mode}_p95_ms")) for size in sizes]
            points = [(size, value) for size, value in points if value is not None]
            if points:
                axis.plot(*zip(*points, strict=True), marker="o", label=backend)
        axis.set_title(f"{mode} p95")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("chunks")
        axis.set_ylabel("ms")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].legend()
    figure.suptitle("Search at scale (top 10, real text; see the table for which vectors are real)")
    save_chart(figure, path, dpi=90)
    # A few flat colours: as a palette image the chart is a fraction of the size (it is kept in the docs).
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=32)
    small.save(path, optimize=True)
    return path


def bench_scale(
    out: Out,
    sizes: tuple[int, ...] = SIZES,
    backends: tuple[str, ...] = BACKENDS,
    queries: int = 40,
    embed_upto: int = 10_000,
    embed_minutes: float = 30.0,
) -> dict[str, Any]:
    """Build (once) and measure the scale bases; `embed_upto` chunks get real embeddings (resumed from the cache,
    for at most `embed_minutes` this run). Returns the report; the chart's path is in `report["chart"]`."""
    data = eval_data_dir()
    if data is None:
        out("the public evaluation sets are not here (../shared/data); the scale benchmark needs their text")
        return {"skipped": "no evaluation data"}
    folder = get_settings().data_dir / "bench-scale"
    folder.mkdir(parents=True, exist_ok=True)
    corpus = ScaleCorpus(data, DEMO_CORPUS_DIR)
    cache = EmbeddingCache(corpus, folder)
    out(f"corpus: {len(corpus.sources):,} paragraphs of real text, {len(corpus.sentences):,} sentences to recombine")
    need = max(len(corpus.sources), min(embed_upto, max(sizes)))
    if cache.embedded() < need:
        out(f"embedding up to {need:,} chunks (cached, resumable; one torch thread)…")
        cache.embed(need, out, deadline=time.monotonic() + 60 * embed_minutes)
    if cache.embedded() < len(corpus.sources):
        raise RuntimeError("the corpus paragraphs are not embedded yet; run again to resume the embedding")
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    rng = random.Random(17)
    picked = rng.sample(corpus.questions, k=min(len(corpus.questions), queries + WARM))
    warm, asked = picked[:WARM], picked[WARM:]
    model = get_embedding_model()
    vectors = [model.embed([q])[0] for q in asked]
    report: dict[str, Any] = {"top_k": TOP_K, "queries": len(asked), "embedded": cache.embedded(), "sizes": {}}
    prepared = _prepare(corpus, cache, max(sizes), out)
    for size in sorted(sizes):
        base = ScaleBase(prepared, size)
        out(
            f"{size:,} chunks ({base.real:,} real embeddings, {size - base.real:,} composed), {len(asked)} questions, "
            f"top {TOP_K}"
        )
        row: dict[str, Any] = {"real_embeddings": base.real, "average_terms": round(base.average_terms, 1)}
        for backend in backends:
            collection = f"scale_{size}_{corpus.fingerprint[:8]}"
            settings = _settings_for(backend, folder, collection)
            try:
                kb = _open(settings)
            except KnowledgeBaseUnavailable as exc:
                row[backend] = {"error": str(exc)}
                out(f"  {backend}: skipped: {exc}")
                continue
            try:
                key = f"{backend}:{collection}"

                def save(entry: dict, key: str = key) -> None:
                    manifest[key] = entry
                    manifest_path.write_text(json.dumps(manifest, indent=2))

                kb, entry = _build(kb, base, manifest.get(key, {}), out, save, settings)
                reference = _keyword_reference(kb, base, out) if backend == "pgvector" else base
                memory = _load_keyword_memory(kb, out) if backend == "pgvector" else {}
                with one_blas_thread():
                    measured = _measure(backend, kb, base, asked, vectors, warm, out, settings, reference)
                row[backend] = {
                    **entry,
                    **_disk_size(kb, folder),
                    **measured,
                    **memory,
                    "keyword_reference": "stored counts" if reference is not base else "analyzer",
                }
                if backend == "pgvector":
                    row[backend]["alternatives"] = _pgvector_alternatives(kb, base, asked, vectors, reference)
                    for kind, variants in row[backend]["alternatives"].items():
                        for name, values in variants.items():
                            out(f"    {kind:<7} {name:<28} " + " ".join(f"{k} {v}" for k, v in values.items()))
            finally:
                _release_keyword_memory(kb)
                kb.close()
                close_knowledge_bases()
        report["sizes"][size] = row
    report["chart"] = str(chart(report, folder / "search-at-scale.png"))
    out(f"chart written to {report['chart']}")
    return report


def bench_scale_keyword(out: Out, queries: int = 40, passes: int = 2) -> dict[str, Any]:
    """Keyword search on the pgvector scale bases already built (those the manifest names; nothing is built or
    embedded, whatever the corpus is today): the in-memory index and the server-side function, through the knowledge
    base (rows included) and the index's own call, question by question in turn, `passes` times; recall@10 of both
    against an exact BM25 over the counts each base stores; the copy's load time and size; the function's server
    CPU. The same questions as `bench_scale`."""
    data = eval_data_dir()
    if data is None:
        out("the public evaluation sets are not here (../shared/data); the scale benchmark's questions come from them")
        return {"skipped": "no evaluation data"}
    folder = get_settings().data_dir / "bench-scale"
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    bases = sorted(
        (int(entry["chunks"]), key.split(":", 1)[1])
        for key, entry in manifest.items()
        if key.startswith("pgvector:") and entry.get("written") is not None
    )
    if not bases:
        out("no pgvector scale base is built yet; run --only scale first")
        return {"skipped": "no base"}
    questions = corpus_questions(data)
    picked = random.Random(17).sample(questions, k=min(len(questions), queries + WARM))
    warm, asked = picked[:WARM], picked[WARM:]
    report: dict[str, Any] = {"top_k": TOP_K, "queries": len(asked), "passes": passes, "load_average": [], "sizes": {}}
    report["load_average"].append(os.getloadavg()[0])
    for size, collection in bases:
        try:
            kb = _open(_settings_for("pgvector", folder, collection))
        except KnowledgeBaseUnavailable as exc:
            out(f"  {collection}: skipped: {exc}")
            continue
        try:
            out(
                f"{size:,} chunks ({collection}), {len(asked)} questions, {passes} passes, load average "
                f"{os.getloadavg()[0]:.1f}"
            )
            row: dict[str, Any] = {"collection": collection, **_load_keyword_memory(kb, out)}
            reference = _stored_counts(kb)
            timings: dict[str, list[float]] = {}
            for _ in range(passes):
                memory, hits, database, database_hits = _keyword_both_ways(kb, asked, warm)
                timings.setdefault("keyword", []).extend(memory)
                timings.setdefault("keyword_database", []).extend(database)
                pairs = (("keyword", hits), ("keyword_database", database_hits))
                for name, found in pairs:
                    row[f"{name}_recall_at_10"] = _keyword_recall(
                        reference, asked, [[(h.chunk.chunk_id, h.raw_score) for h in one] for one in found]
                    )
                index_timings, index_hits = _index_both_ways(kb.index, asked)
                for name, values in index_timings.items():
                    timings.setdefault(name, []).extend(values)
                for name, found in index_hits.items():
                    row[f"{name}_recall_at_10"] = _keyword_recall(reference, asked, found)
            for name, values in timings.items():
                row.update(_summary(name, values))
            cpu = _server_cpu(kb.index, asked)
            if cpu is not None:
                row.update(_summary("function_server_cpu", cpu))
            for name, values in _cpu_both_ways(kb, asked).items():
                row.update(_summary(name, values))
            row["load_average"] = os.getloadavg()[0]
            report["sizes"][size] = row
            out("  " + " ".join(f"{key} {value}" for key, value in row.items() if key != "collection"))
        finally:
            _release_keyword_memory(kb)
            kb.close()
    report["load_average"].append(os.getloadavg()[0])
    return report


def _index_both_ways(index: Any, queries: list[str]) -> tuple[dict[str, list[float]], dict[str, list[Any]]]:
    """The index's keyword call (rows read, no document lookup) from the in-memory index and as the server-side
    function's one statement, question by question in turn."""
    cap = index.keyword_index_max_postings
    timings: dict[str, list[float]] = {"index_memory": [], "index_function": []}
    hits: dict[str, list[Any]] = {"index_memory": [], "index_function": []}
    for query in queries:
        for name, limit in (("index_memory", cap), ("index_function", 0)):
            index.keyword_index_max_postings = limit
            try:
                started = time.perf_counter()
                found = index.keyword(query, TOP_K)
                timings[name].append((time.perf_counter() - started) * 1000.0)
            finally:
                index.keyword_index_max_postings = cap
            hits[name].append([(hit.document.id, hit.raw_score) for hit in found])
    return timings, hits


def _cpu_both_ways(kb: Any, queries: list[str]) -> dict[str, list[float]]:
    """CPU milliseconds per question of keyword search through the knowledge base, from the in-memory index and on
    the database: this process's thread plus every backend of the database server (their scheduler statistics; only
    for a server on this machine that nothing else uses while it runs), what a question costs whatever else runs."""
    index = kb.index
    cap = index.keyword_index_max_postings
    with kb.registry.connection() as conn:
        statement = "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'"
        pids = [row[0] for row in conn.execute(statement)]
    stats = [Path(f"/proc/{pid}/schedstat") for pid in pids]
    if not stats or not all(stat.exists() for stat in stats):
        return {}

    def used() -> float:
        server = 0.0
        for stat in stats:
            with contextlib.suppress(OSError):
                server += int(stat.read_text().split()[0]) / 1e6
        return server + time.thread_time() * 1000.0

    spent: dict[str, list[float]] = {"keyword_cpu": [], "keyword_database_cpu": []}
    for query in queries:
        for name, limit in (("keyword_cpu", cap), ("keyword_database_cpu", 0)):
            index.keyword_index_max_postings = limit
            try:
                started = used()
                kb.keyword_search(query, TOP_K)
                spent[name].append(used() - started)
            finally:
                index.keyword_index_max_postings = cap
    return spent
