"""Bounded load tests of the real server: 200 research questions from 8 concurrent clients, no errors; and 3 bursts
of 50 concurrent questions, some uploaded slowly, with no 5xx.

Throughput and latency percentiles are printed and written to `test-artifacts/serving-load.json`.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from tests.pipelines.serving.conftest import RunningServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

QUESTIONS = 200
CLIENTS = 8
_TEMPLATES = [
    "Who won Super Bowl 50?",
    "Where was Super Bowl 50 played?",
    "What is an HNSW index?",
    "What does ef_search trade off?",
    "How does reciprocal rank fusion combine ranked lists?",
    "Why does hybrid search use reciprocal rank fusion?",
    "When should the HNSW index be built?",
    "What was the final score of Super Bowl 50?",
    "Which team lost Super Bowl 50?",
    "What is approximate nearest neighbour search?",
]


async def _load(server: RunningServer) -> tuple[list[float], list[str], float]:
    questions = [f"{_TEMPLATES[i % len(_TEMPLATES)]} (variant {i // len(_TEMPLATES)})" for i in range(QUESTIONS)]
    queue: asyncio.Queue[str] = asyncio.Queue()
    for question in questions:
        queue.put_nowait(question)
    latencies: list[float] = []
    failures: list[str] = []

    async def client_loop() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, headers=server.headers, timeout=120) as client:
            while True:
                try:
                    question = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                started = time.perf_counter()
                response = await client.post("/research/run", json={"question": question, "sources": ["kb"]})
                latencies.append((time.perf_counter() - started) * 1000.0)
                if response.status_code != 200 or not response.json()["result"]["chunks"]:
                    failures.append(f"{response.status_code}: {response.text[:200]}")

    started = time.perf_counter()
    await asyncio.gather(*(client_loop() for _ in range(CLIENTS)))
    return latencies, failures, time.perf_counter() - started


def _report(name: str, latencies: list[float], **figures: Any) -> dict[str, Any]:
    """`figures` with the latencies' p50, p95 and maximum, written to test-artifacts/NAME.json and printed."""
    report = {
        **figures,
        "p50_ms": round(float(np.percentile(latencies, 50)), 1),
        "p95_ms": round(float(np.percentile(latencies, 95)), 1),
        "max_ms": round(max(latencies), 1),
    }
    out = Path(__file__).resolve().parents[3] / "test-artifacts"
    out.mkdir(exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2))
    print(f"\n{name}: {json.dumps(report)}")
    return report


def test_200_questions_from_8_clients_without_errors(server: RunningServer) -> None:
    latencies, failures, seconds = asyncio.run(_load(server))
    assert not failures, failures[:3]
    assert len(latencies) == QUESTIONS
    report = _report(
        "serving-load",
        latencies,
        questions=QUESTIONS,
        clients=CLIENTS,
        seconds=round(seconds, 2),
        throughput_qps=round(QUESTIONS / seconds, 2),
    )
    assert report["throughput_qps"] > 0


BURSTS = 3
BURST_SIZE = 50


async def _burst(server: RunningServer, burst: int) -> tuple[list[int], list[float]]:
    """50 questions at once; every fifth body arrives in pieces over about a second (a slow upload)."""

    async def slow_body(payload: bytes):  # noqa: ANN202
        for start in range(0, len(payload), 16):
            await asyncio.sleep(0.1)
            yield payload[start : start + 16]

    async def ask(client: httpx.AsyncClient, i: int) -> tuple[int, float]:
        payload = json.dumps({"question": f"{_TEMPLATES[i % len(_TEMPLATES)]} (burst {burst}, {i})", "sources": ["kb"]})
        body = payload.encode()
        headers = {"Content-Type": "application/json"}
        started = time.perf_counter()
        if i % 5 == 0:
            response = await client.post("/research/run", content=slow_body(body), headers=headers)
        else:
            response = await client.post("/research/run", content=body, headers=headers)
        return response.status_code, (time.perf_counter() - started) * 1000.0

    limits = httpx.Limits(max_connections=BURST_SIZE, max_keepalive_connections=BURST_SIZE)
    async with httpx.AsyncClient(base_url=server.base_url, headers=server.headers, timeout=90, limits=limits) as client:
        results = await asyncio.gather(*(ask(client, i) for i in range(BURST_SIZE)))
    return [code for code, _ in results], [ms for _, ms in results]


def test_3_bursts_of_50_concurrent_questions_with_slow_uploads_without_5xx(server: RunningServer) -> None:
    codes: list[int] = []
    latencies: list[float] = []
    started = time.perf_counter()
    for burst in range(BURSTS):
        burst_codes, burst_latencies = asyncio.run(_burst(server, burst))
        codes += burst_codes
        latencies += burst_latencies
    seconds = time.perf_counter() - started
    report = _report(
        "serving-bursts",
        latencies,
        questions=len(codes),
        bursts=BURSTS,
        concurrent=BURST_SIZE,
        seconds=round(seconds, 1),
        status_codes={str(code): codes.count(code) for code in sorted(set(codes))},
    )
    assert not [code for code in codes if code >= 500], report
    assert codes.count(200) == BURSTS * BURST_SIZE, report
