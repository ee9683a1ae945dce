"""Telling a service that cannot be reached at all from one whose connection dropped mid-answer."""

from __future__ import annotations

import requests

from components.resilience import RetryableError
from components.resilience.errors import ServiceUnreachable

__all__ = ["ServiceUnreachable", "connection_fault"]


def connection_fault(exc: requests.exceptions.ConnectionError, service: str) -> Exception:
    """The contract's error for a failed connection to `service`: unreachable (not retried) or dropped (retried)."""
    from urllib3.exceptions import NewConnectionError

    reason = exc.args[0] if exc.args else None
    reason = getattr(reason, "reason", reason)
    if isinstance(reason, NewConnectionError):
        what = "its name does not resolve" if "resolution" in type(reason).__name__.lower() else "nothing answers there"
        return ServiceUnreachable(f"cannot reach {service}: {what}")
    return RetryableError(f"cannot reach {service}: the connection dropped", kind="connection")
