"""`SourceStatus`: what every source reports about one run, whatever happened."""

from __future__ import annotations

import time
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from components.redaction import redact


class StatusKind(str, Enum):  # noqa: UP042 - a StrEnum would change what str() and f-strings print for a member
    """How a source's run ended."""

    SUCCESS = "success"
    PARTIAL = "partial"
    TIMEOUT = "timeout"
    ERROR = "error"
    SKIPPED = "skipped"


class SourceStatus(BaseModel):
    """One source's report for one run: never absent, even when the source failed or did not run.

    Immutable (a changed report is made by `changed(...)`, which validates and redacts as construction does), so a copy
    of it is itself: Haystack, which deep-copies every component's inputs, hands a status on as it is.
    """

    model_config = ConfigDict(frozen=True)

    source: str
    status: StatusKind
    execution_time_ms: float = Field(ge=0.0)
    total_found: int = Field(default=0, ge=0)
    message: str = ""
    from_cache: bool = False
    attempts: int = Field(default=1, ge=0)

    @field_validator("message")
    @classmethod
    def _no_secrets(cls, value: str) -> str:
        # Messages quote upstream errors, and some upstreams echo the request's key: redact at construction.
        return redact(value)

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> SourceStatus:
        return self

    def changed(self, **fields: Any) -> SourceStatus:
        """This report with `fields` changed, validated as a new one is (a message is redacted; pydantic's
        `model_copy(update=...)` would skip both). A name that is not a field is refused, not dropped."""
        unknown = sorted(fields.keys() - type(self).model_fields.keys())
        if unknown:
            raise TypeError(f"A source status has no field {', '.join(map(repr, unknown))} to change.")
        return type(self).model_validate({**self.model_dump(), **fields})

    @property
    def ok(self) -> bool:
        """True when the source returned what it had (success or partial)."""
        return self.status in (StatusKind.SUCCESS, StatusKind.PARTIAL)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (enum values as strings)."""
        return self.model_dump(mode="json")

    @classmethod
    def refused(cls, source: str, message: str, started: float) -> SourceStatus:
        """The status of a source that refused its input before any attempt (`started`: `time.monotonic()`)."""
        elapsed_ms = max(0.0, (time.monotonic() - started) * 1000.0)
        return cls(source=source, status=StatusKind.ERROR, execution_time_ms=elapsed_ms, message=message, attempts=0)

    @classmethod
    def skipped(cls, source: str, message: str) -> SourceStatus:
        """The status of a source that was not asked."""
        return cls(source=source, status=StatusKind.SKIPPED, execution_time_ms=0.0, message=message, attempts=0)
