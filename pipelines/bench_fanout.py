"""Fan-out overhead: what running several sources at once costs beyond the slowest of them.

Six branches with known durations (20-70 ms of waiting, as a remote source spends its time) run through the same
machinery as the research pipeline's sources: each under the one resilience policy (SourceGuard), concurrently with
`Pipeline.run_async`, joined by reciprocal rank fusion and collected by the status collector. Overhead = total
latency minus the slowest branch. Target: under 15 ms.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from haystack import Document, Pipeline, component

from components.contracts import ContextChunk, SourceStatus, chunk_to_document
from components.ranking.joiner import LoopDocumentJoiner
from components.resilience import ResiliencePolicy, SourceGuard
from pipelines.evaluation.metrics import percentile
from pipelines.status_collector import SourceStatusCollector

BRANCH_MS = (20, 30, 40, 50, 60, 70)


@component
class TimedSource:
    """A source that spends `delay_ms` waiting on a remote answer, then returns `chunks` chunks (bench only)."""

    def __init__(self, name: str, delay_ms: float, chunks: int = 5) -> None:
        self.name = name
        self.delay_ms = delay_ms
        self.chunks = chunks
        self._guard = SourceGuard(f"bench_{name}", ResiliencePolicy(timeout_s=5, retries=0))

    def _result(self) -> list[ContextChunk]:
        return [
            ContextChunk(
                id=f"{self.name}-{index}",
                source_type="web",
                text=f"{self.name} finding {index}",
                semantic_relevance=0.5,
                source_id=f"https://example.org/{self.name}/{index}",
                metadata={
                    "domain": "example.org",
                    "page_url": f"https://example.org/{self.name}/{index}",
                    "fetch_timestamp": "2026-01-01T00:00:00",
                },
            )
            for index in range(self.chunks)
        ]

    @component.output_types(documents=list[Document], status=SourceStatus)
    def run(self, query: str) -> dict[str, Any]:
        def work() -> list[ContextChunk]:
            time.sleep(self.delay_ms / 1000)
            return self._result()

        result, status = self._guard.call(work)
        return {"documents": [chunk_to_document(chunk) for chunk in result.chunks], "status": status}


def fanout_pipeline(delays_ms: tuple[float, ...] = BRANCH_MS) -> Pipeline:
    """The fan-out part of the research pipeline with timed sources in place of the real ones."""
    pipeline = Pipeline()
    pipeline.add_component("joiner", LoopDocumentJoiner(join_mode="reciprocal_rank_fusion"))  # its fusion, as a list
    pipeline.add_component("statuses", SourceStatusCollector())
    for index, delay in enumerate(delays_ms):
        name = f"source{index}"
        pipeline.add_component(name, TimedSource(name, delay))
        pipeline.connect(f"{name}.documents", "joiner.documents")
        pipeline.connect(f"{name}.status", "statuses.statuses")
    return pipeline


def bench_fanout(out: Callable[[str], None], runs: int = 40) -> dict[str, Any]:
    """Total latency minus the slowest branch, over `runs` questions (p50 and p95)."""
    pipeline = fanout_pipeline()
    inputs = {f"source{index}": {"query": "q"} for index in range(len(BRANCH_MS))}
    slowest = max(BRANCH_MS)

    async def measure() -> list[float]:
        overheads = []
        for run in range(runs + 3):
            started = time.perf_counter()
            result = await pipeline.run_async(inputs, concurrency_limit=8)
            elapsed = (time.perf_counter() - started) * 1000
            assert len(result["joiner"]["documents"]) == 5 * len(BRANCH_MS)
            if run >= 3:  # the first runs pay for warm-up
                overheads.append(elapsed - slowest)
        return overheads

    overheads = asyncio.run(measure())
    p50, p95 = percentile(overheads, 50), percentile(overheads, 95)
    out(
        f"fan-out: {len(BRANCH_MS)} concurrent sources of {min(BRANCH_MS)}-{slowest} ms; total minus slowest "
        f"p50 {p50:.1f} ms, p95 {p95:.1f} ms (target < 15 ms) {'PASS' if p50 < 15 else 'FAIL'}"
    )
    return {
        "branches": len(BRANCH_MS),
        "slowest_ms": slowest,
        "overhead_p50_ms": round(p50, 2),
        "overhead_p95_ms": round(p95, 2),
        "target_ms": 15,
        "pass": p50 < 15,
    }
