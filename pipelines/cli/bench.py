"""`research bench`: the speed targets, each as a ratio against its floor measured in the same run."""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="measure ingestion and query speed against their floors (ratios)",
        description=(
            "Measures, in one run: ingestion chunks/s against the embedder alone on the same chunks (target >= 0.8), "
            "and research-query p50/p95 against query embedding + raw store searches at a knowledge base of "
            "--chunks chunks (target <= 1.5x). The large base is built from a few hundred really embedded chunks "
            "plus noisy copies: search cost depends on the index and row count, not on what vectors mean."
        ),
    )
    parser.add_argument("--chunks", type=int, default=10_000, help="chunks in the query benchmark's base (>= 1000)")
    parser.add_argument("--queries", type=int, default=60, help="queries to time (10-1000)")
    parser.add_argument("--only", choices=["ingest", "query", "backends", "extraction", "fanout"], action="append",
                        help="run only these parts (repeatable)")
    parser.add_argument("--backend", action="append", choices=["pgvector", "milvus", "qdrant"],
                        help="compare these knowledge-base backends at --sizes (repeatable)")
    parser.add_argument("--sizes", default="10000", help="comma-separated base sizes for --backend (e.g. 10000,100000)")
    parser.add_argument("--out", type=Path, help="write the results as JSON to this file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.cli import UserError

    if args.chunks < 1000:
        raise UserError("--chunks must be at least 1000")
    if not 10 <= args.queries <= 1000:
        raise UserError("--queries must be between 10 and 1000")
    parts = set(args.only or (["ingest", "query"] + (["backends"] if args.backend else [])))
    if args.backend:
        parts.add("backends")

    def out(line: str) -> None:
        print(line, flush=True)

    from pipelines import bench

    results: dict = {"machine": {"python": platform.python_version(), "cores": _cores()}, "started": time.time()}
    passed = True
    if "ingest" in parts:
        out("== ingestion")
        results["ingestion"] = bench.bench_ingestion(out)
        passed &= results["ingestion"]["pass"]
    if "extraction" in parts or ("ingest" in parts and _has("components.graph.bench")):
        from components.graph.bench import bench_extraction

        out("== graph extraction overhead")
        results["extraction"] = bench_extraction(out)
        passed &= bool(results["extraction"].get("pass", True))
    if "query" in parts:
        out(f"== research query at {args.chunks} chunks")
        results["query"] = bench.bench_queries(out, n_chunks=args.chunks, n_queries=args.queries)
        passed &= results["query"]["pass"]
    if "fanout" in parts or ("query" in parts and _has("pipelines.bench_fanout")):
        from pipelines.bench_fanout import bench_fanout

        out("== fan-out overhead")
        results["fanout"] = bench_fanout(out)
        passed &= bool(results["fanout"].get("pass", True))
    if "backends" in parts:
        from pipelines.bench_backends import bench_backends

        sizes = [int(size) for size in args.sizes.split(",") if size.strip()]
        out(f"== knowledge-base backends at {sizes}")
        results["backends"] = bench_backends(args.backend or ["pgvector", "milvus", "qdrant"], sizes, args.queries, out)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
        out(f"results written to {args.out}")
    return 0 if passed else 1


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


