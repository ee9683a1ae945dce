"""Per-tool counters: calls, outcomes, failures by kind, latency percentiles and cache hits."""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class _ToolStats:
    counts: Counter = field(default_factory=Counter)  # calls, cache_hits, and success, partial and skipped calls
    failures: Counter = field(default_factory=Counter)  # the other calls, by fault
    latencies_ms: deque = field(default_factory=lambda: deque(maxlen=1000))


class ToolTelemetry:
    """Thread-safe, process-wide telemetry of every guarded tool call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats: dict[str, _ToolStats] = {}

    def record(
        self, tool: str, status: str, latency_ms: float, *, fault: str | None = None, cached: bool = False
    ) -> None:
        """Count one call of `tool` that ended in `status`."""
        with self._lock:
            stats = self._stats.setdefault(tool, _ToolStats())
            stats.counts.update(calls=1, cache_hits=int(cached))
            if status in ("success", "partial", "skipped"):
                stats.counts[status] += 1
            else:
                stats.failures[fault or status] += 1
            stats.latencies_ms.append(latency_ms)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every tool's counters and latency p50/p95 in milliseconds."""
        with self._lock:
            out: dict[str, dict[str, Any]] = {}
            for tool, stats in sorted(self._stats.items()):
                latencies = np.array(stats.latencies_ms, dtype=float)
                counts = stats.counts
                out[tool] = {
                    "calls": counts["calls"],
                    "successes": counts["success"],
                    "partials": counts["partial"],
                    "skipped": counts["skipped"],
                    "failures": dict(stats.failures),
                    "cache_hits": counts["cache_hits"],
                    "p50_ms": float(np.percentile(latencies, 50)) if latencies.size else None,
                    "p95_ms": float(np.percentile(latencies, 95)) if latencies.size else None,
                }
            return out

    def reset(self) -> None:
        """Forget everything (tests)."""
        with self._lock:
            self._stats.clear()


telemetry = ToolTelemetry()
