"""A small append-only log of tool calls in the data folder, so `research status` (a separate process) can show
each tool's calls, outcomes, latency and cache hits from the CLI, the app and the server alike.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from haystack import logging

from components.contracts import SourceStatus
from components.resilience.telemetry import ToolTelemetry
from components.settings import Settings, get_settings

logger = logging.getLogger(__name__)

MAX_BYTES = 2_000_000
_LOCK = threading.Lock()


def call_log_path(settings: Settings | None = None) -> Path:
    """Where tool calls are logged: `<data folder>/telemetry/tool_calls.jsonl` of `settings` (None: the process's),
    taken when an executor or a status report is made, never per call."""
    return (settings or get_settings()).data_dir / "telemetry" / "tool_calls.jsonl"


def record_call(tool: str, status: SourceStatus, fault: str | None = None, *, path: Path) -> None:
    """Append one call to `path` (the caller's `call_log_path()`, taken when it was built); a full log keeps its
    newer half. Logging never breaks a tool call."""
    line = json.dumps(
        {
            "t": round(time.time(), 3),
            "tool": tool,
            "status": status.status.value,
            "fault": fault,
            "ms": round(status.execution_time_ms, 3),
            "cached": status.from_cache,
        }
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _LOCK:
            if path.exists() and path.stat().st_size > MAX_BYTES:
                lines = path.read_text(encoding="utf-8").splitlines()
                path.write_text("\n".join(lines[len(lines) // 2 :]) + "\n", encoding="utf-8")
            # One short line per O_APPEND write: processes appending at once do not interleave.
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644), "ab", buffering=0) as log:
                log.write((line + "\n").encode("utf-8"))
    except OSError as exc:
        logger.warning("Could not log the call of tool {tool}: {reason}", tool=tool, reason=str(exc))


def summarise_calls(path: Path) -> dict[str, dict[str, Any]]:
    """Per tool, the telemetry's counters (`ToolTelemetry.snapshot`: latency over the last 1,000 calls) replayed
    from the calls every process logged at `path` (a `call_log_path()`)."""
    if not path.exists():
        return {}
    replay = ToolTelemetry()
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(raw)
            tool, status = str(item["tool"]), str(item["status"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a crash
        ms, fault = float(item.get("ms") or 0.0), item.get("fault")
        replay.record(tool, status, ms, fault=fault, cached=bool(item.get("cached")))
    return replay.snapshot()
