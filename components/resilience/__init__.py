"""The tool contract: one resilience policy that every source component runs its work through."""

from components.resilience.errors import RetryableError, SourceError, classify_exception
from components.resilience.guard import (
    CircuitBreaker,
    ResiliencePolicy,
    SourceGuard,
    SourceResult,
    TTLCache,
    reset_resilience_state,
)
from components.resilience.telemetry import ToolTelemetry, telemetry

__all__ = [
    "CircuitBreaker",
    "ResiliencePolicy",
    "RetryableError",
    "SourceError",
    "SourceGuard",
    "SourceResult",
    "TTLCache",
    "ToolTelemetry",
    "classify_exception",
    "reset_resilience_state",
    "telemetry",
]
