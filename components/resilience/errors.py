"""Errors a source raises inside its guarded call, and how any exception is classified."""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import json
from dataclasses import dataclass
from typing import Any

from components.redaction import cut


class SourceError(Exception):
    """A fault that retrying will not mend (bad input, missing key, not found); its text reaches the analyst."""


class ServiceUnreachable(Exception):  # noqa: N818 - the name reads as the status message's prefix
    """Nothing answers at the service's address (name not resolved, connection refused): retrying will not help
    within a question's budget, but it still counts toward the source's circuit breaker."""


class RetryableError(Exception):
    """A passing fault (rate limit, 5xx, dropped connection); `retry_after` is the server's wish in seconds."""

    def __init__(self, message: str, retry_after: float | None = None, kind: str = "unavailable") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.kind = kind


def first_line(exc: BaseException, limit: int = 200) -> str:
    """An error's first line (client libraries add hints and tracebacks below it), redacted, then cut to at most
    `limit` characters, for a one-sentence message; the exception's type name when it says nothing."""
    text = str(exc).strip()
    return cut(text.splitlines()[0] if text else type(exc).__name__, limit)


@dataclass(frozen=True)
class Fault:
    """What an exception means for the policy."""

    kind: str  # timeout | rate_limited | unavailable | connection | invalid | error
    retryable: bool
    message: str
    retry_after: float | None = None


def parse_retry_after(value: Any) -> float | None:
    """Seconds from a Retry-After header value (delta-seconds or HTTP date)."""
    if value is None:
        return None
    text = str(value).strip()
    with contextlib.suppress(ValueError):
        return max(0.0, float(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def raise_for_busy(status_code: int, headers: Any, service: str) -> None:
    """`RetryableError` for an HTTP 429 or 5xx answer of `service`, with the Retry-After it asks for."""
    if status_code == 429 or status_code >= 500:
        kind = "rate_limited" if status_code == 429 else "unavailable"
        retry_after = parse_retry_after(headers.get("Retry-After"))
        raise RetryableError(f"{service} answered HTTP {status_code}", retry_after=retry_after, kind=kind)


def _status_code_and_headers(exc: BaseException) -> tuple[int | None, Any]:
    response = getattr(exc, "response", None)
    for holder in (exc, response):
        code = getattr(holder, "status_code", None)
        if code is None:
            code = getattr(holder, "status", None)
        if isinstance(code, int):
            headers = getattr(holder, "headers", None)
            return code, getattr(response, "headers", None) if headers is None else headers
    return None, None


def _own_cause(exc: BaseException) -> BaseException | None:
    """The first of this package's own errors in `exc`'s chain of causes (a client library may wrap one raised in
    its transport, e.g. openai's `APIConnectionError` around a refused connection or an over-long body)."""
    seen = 0
    cause = exc.__cause__ or exc.__context__
    while cause is not None and seen < 8:
        if isinstance(cause, (SourceError, RetryableError, ServiceUnreachable)):
            return cause
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None


def classify_exception(exc: BaseException) -> Fault:
    """Map any exception to a `Fault`: retryable or not, and a one-line message without a stack trace."""
    if not isinstance(exc, (SourceError, RetryableError, ServiceUnreachable)) and (own := _own_cause(exc)):
        return classify_exception(own)
    if isinstance(exc, SourceError):
        return Fault("invalid", False, first_line(exc, 300))
    if isinstance(exc, RetryableError):
        return Fault(exc.kind or "unavailable", True, first_line(exc, 300), exc.retry_after)
    if isinstance(exc, TimeoutError) or "timeout" in type(exc).__name__.lower():
        return Fault("timeout", True, "timed out")
    code, headers = _status_code_and_headers(exc)
    if code is not None:
        try:
            retry_after = parse_retry_after(headers.get("Retry-After") or headers.get("retry-after"))
        except AttributeError:  # no headers, or not a mapping
            retry_after = None
        if code == 429:
            return Fault("rate_limited", True, f"rate limited (HTTP 429): {first_line(exc, 300)}", retry_after)
        if code >= 500:
            return Fault("unavailable", True, f"server error (HTTP {code}): {first_line(exc, 300)}", retry_after)
        if code in (401, 403):
            return Fault("auth", False, f"not authorised (HTTP {code}): check the API key")
        return Fault("invalid", False, f"request refused (HTTP {code}): {first_line(exc, 300)}")
    if isinstance(exc, (ConnectionError, OSError)) or "connect" in type(exc).__name__.lower():
        return Fault("connection", True, f"cannot reach the service: {first_line(exc, 300)}")
    if isinstance(exc, json.JSONDecodeError) or "decode" in type(exc).__name__.lower():
        # A body that is not the JSON (or XML) the service documents: the service's fault, not the input's.
        return Fault("malformed", False, f"the service sent a malformed response ({first_line(exc, 300)})")
    if isinstance(exc, ValueError):
        return Fault("invalid", False, first_line(exc, 300))
    return Fault("error", False, f"{type(exc).__name__}: {first_line(exc, 300)}")
