"""`research bench`: the speed targets, each as a ratio against its floor measured in the same run."""

from __future__ import annotations

import argparse
import json
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
    parser.add_argument(
        "--only",
        action="append",
        choices=["ingest", "query", "backends", "extraction", "fanout", "cli", "hostile", "scale", "scale-keyword"],
        help="run only these parts (repeatable); `cli` times fresh `research` "
        "processes (--help, docs list, cold ask, ask with a running server) on the configured "
        "knowledge base; `hostile`: a server's memory while every upstream sends an endless body; "
        "`scale`: search at 10k-100k chunks of real text; `scale-keyword`: keyword search on the "
        "scale bases already built, in memory against the database (none of the four is run by "
        "default)",
    )
    parser.add_argument(
        "--question", default=None, help="the question `--only cli` asks (default: one of the demo corpus)"
    )
    parser.add_argument(
        "--hostile-seconds",
        type=float,
        default=90.0,
        help="how long the hostile part sends questions against endless upstreams (10-3600)",
    )
    parser.add_argument(
        "--backend",
        action="append",
        choices=["pgvector", "milvus", "qdrant"],
        help="compare these knowledge-base backends at --sizes (repeatable; pgvector's writes "
        "also against a COPY of the same rows into a bare table, in the same run)",
    )
    parser.add_argument("--sizes", default="10000", help="comma-separated base sizes for --backend (e.g. 10000,100000)")
    parser.add_argument(
        "--scale-sizes",
        default="10000,30000,100000",
        help="base sizes of --only scale (real text; built once, cached in the data folder)",
    )
    parser.add_argument(
        "--scale-embed",
        type=int,
        default=10_000,
        help="chunks of --only scale with real embeddings (cached, resumed; the rest composed)",
    )
    parser.add_argument(
        "--scale-backends",
        default="pgvector,milvus,qdrant",
        help="comma-separated backends of --only scale (a base not built yet is built first)",
    )
    parser.add_argument("--out", type=Path, help="write the results as JSON to this file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.cli import UserError
    from pipelines.runtime import setup

    setup()  # the benchmarks measure the pipelines as the product's entry points run them
    if args.chunks < 1000:
        raise UserError("--chunks must be at least 1000")
    if not 10 <= args.queries <= 1000:
        raise UserError("--queries must be between 10 and 1000")
    if not 10 <= args.hostile_seconds <= 3600:
        raise UserError("--hostile-seconds must be between 10 and 3600")
    unknown = {name.strip() for name in args.scale_backends.split(",")} - {"pgvector", "milvus", "qdrant"}
    if unknown:
        raise UserError(f"--scale-backends takes pgvector, milvus and qdrant, not {', '.join(sorted(unknown))}")
    parts = set(args.only or ["ingest", "query"]) | ({"backends"} if args.backend else set())
    # Each speed target comes with the overhead measured beside it: ingestion's graph extraction, the query's fan-out.
    parts |= {"extraction"} if "ingest" in parts else set()
    parts |= {"fanout"} if "query" in parts else set()

    def out(line: str) -> None:
        print(line, flush=True)

    from pipelines import bench
    from pipelines.bench_backends import bench_backends
    from pipelines.bench_fanout import bench_fanout
    from pipelines.bench_graph import bench_extraction
    from pipelines.bench_hostile import bench_hostile
    from pipelines.bench_scale import bench_scale, bench_scale_keyword

    sizes = [int(size) for size in args.sizes.split(",") if size.strip()]
    backends = args.backend or ["pgvector", "milvus", "qdrant"]
    measures = {  # part: (results key, heading, measure); in this order
        "ingest": ("ingestion", "== ingestion", lambda: bench.bench_ingestion(out)),
        "extraction": ("extraction", "== graph extraction overhead", lambda: bench_extraction(out)),
        "query": (
            "query",
            f"== research query at {args.chunks} chunks",
            lambda: bench.bench_queries(out, n_chunks=args.chunks, n_queries=args.queries),
        ),
        "fanout": ("fanout", "== fan-out overhead", lambda: bench_fanout(out)),
        "hostile": (
            "hostile",
            f"== server memory under endless upstream bodies for {args.hostile_seconds:g} s",
            lambda: bench_hostile(out, duration_s=args.hostile_seconds),
        ),
        "scale": (
            "scale",
            "== search at scale",
            lambda: bench_scale(
                out,
                tuple(int(n) for n in args.scale_sizes.split(",")),
                queries=args.queries,
                embed_upto=args.scale_embed,
                backends=tuple(name.strip() for name in args.scale_backends.split(",") if name.strip()),
            ),
        ),
        "scale-keyword": (
            "scale_keyword",
            "== keyword search on the scale bases, in memory and on the database",
            lambda: bench_scale_keyword(out, queries=args.queries),
        ),
        "backends": (
            "backends",
            f"== knowledge-base backends at {sizes}",
            lambda: bench_backends(backends, sizes, args.queries, out),
        ),
        "cli": ("cli", "== command line (fresh processes, wall time)", lambda: _bench_cli(args, out)),
    }
    import platform

    results: dict = {"machine": {"python": platform.python_version(), "cores": _cores()}, "started": time.time()}
    passed = True
    for part, (key, heading, measure) in measures.items():
        if part in parts:
            out(heading)
            results[key] = measure()
            passed &= bool(results[key].get("pass", True))  # the backends comparison has no target
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
        out(f"results written to {args.out}")
    return 0 if passed else 1


def _bench_cli(args: argparse.Namespace, out) -> dict:  # noqa: ANN001 - the printer of `run`
    from pipelines.bench_cli import DEFAULT_QUESTION, BenchSetupError, bench_cli
    from pipelines.cli import UserError

    try:
        return bench_cli(out, question=args.question or DEFAULT_QUESTION)
    except BenchSetupError as exc:
        raise UserError(str(exc)) from exc


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
