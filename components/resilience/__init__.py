"""The tool contract: one resilience policy that every source component runs its work through."""

from components.resilience.errors import RetryableError, SourceError
from components.resilience.guard import ResiliencePolicy, SourceGuard, SourceResult, reset_resilience_state
from components.resilience.telemetry import telemetry

__all__ = [
    "ResiliencePolicy",
    "RetryableError",
    "SourceError",
    "SourceGuard",
    "SourceResult",
    "reset_resilience_state",
    "telemetry",
]
