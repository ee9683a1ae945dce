"""Per-component wall-clock timings of a pipeline run, taken from Haystack's component spans.

`record_timings()` is a context manager: every component that runs inside it (sync or async, in any thread the
pipeline uses) adds its elapsed milliseconds to the dict it yields. The timing tracer is put in Haystack's
process-wide tracer by `install()`, which the process's set-up calls (`pipelines/runtime.py: setup()`), never by
recording; without it the dict stays empty. It wraps whatever tracer was active, so OpenTelemetry or Datadog tracing
keeps working.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Iterator
from typing import Any

from haystack import tracing
from haystack.tracing.tracer import Span, Tracer

_COMPONENT_SPAN = "haystack.component.run"
_CURRENT: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar("research_timings", default=None)
_INSTALL_LOCK = threading.Lock()


class _TimingTracer(Tracer):
    """Times component spans for the active `record_timings()` block and delegates everything to `inner`."""

    def __init__(self, inner: Tracer) -> None:
        self.inner = inner

    @contextlib.contextmanager
    def trace(
        self, operation_name: str, tags: dict[str, Any] | None = None, parent_span: Span | None = None
    ) -> Iterator[Span]:
        record = _CURRENT.get()
        if record is None or operation_name != _COMPONENT_SPAN:
            with self.inner.trace(operation_name, tags=tags, parent_span=parent_span) as span:
                yield span
            return
        started = time.perf_counter()
        try:
            with self.inner.trace(operation_name, tags=tags, parent_span=parent_span) as span:
                yield span
        finally:
            name = str((tags or {}).get("haystack.component.name", "component"))
            record[name] = round(record.get(name, 0.0) + (time.perf_counter() - started) * 1000.0, 3)

    def current_span(self) -> Span | None:
        return self.inner.current_span()


def install() -> None:
    """Wrap Haystack's active tracer in the timing tracer (idempotent)."""
    with _INSTALL_LOCK:
        if not installed():
            tracing.enable_tracing(_TimingTracer(tracing.tracer.actual_tracer))


def installed() -> bool:
    """Whether the timing tracer is Haystack's active tracer."""
    return isinstance(tracing.tracer.actual_tracer, _TimingTracer)


@contextlib.contextmanager
def record_timings() -> Iterator[dict[str, float]]:
    """Yield a dict that fills with `component name -> milliseconds` for the pipeline runs inside the block (once
    `install()` has run)."""
    timings: dict[str, float] = {}
    token = _CURRENT.set(timings)
    try:
        yield timings
    finally:
        _CURRENT.reset(token)
