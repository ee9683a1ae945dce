"""`CatalogPipelineWrapper`: what every served pipeline's `PipelineWrapper` shares.

A wrapper serves one pipeline of the catalog (`pipelines.yaml`): `setup()` loads the catalog (which sets the
deserialisation allowlist) and checks the pipeline is there, so Hayhooks skips a wrapper whose pipeline is not
in the catalog with a warning instead of serving a broken endpoint. Errors the caller caused become HTTP 422 with
one sentence, errors of the server's own configuration HTTP 503 with one sentence (`ServerMisconfigured`); nothing
else about the server's internals leaks into a response.

Usage (in `wrappers/NAME/pipeline_wrapper.py`):
```python
class PipelineWrapper(CatalogPipelineWrapper):
    pipeline_name = "documents"

    def run_api(self, search: str | None = None) -> DocumentPage:
        \"\"\"List documents.\"\"\"
        return DocumentPage.from_outputs(self.run_catalog({"search": search}))
```
"""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

from fastapi import HTTPException
from hayhooks import BasePipelineWrapper
from haystack import logging
from pydantic import BaseModel, ValidationError

from components.redaction import cut
from components.text.dates import input_date
from components.text.language import LanguageModelMismatch, LanguageModelMissing
from components.validation import bounded_text
from pipelines.catalog import ResearchBudgetInvalid
from pipelines.runtime import process_runtime

logger = logging.getLogger(__name__)


class InvalidRequest(HTTPException):
    """A request the caller can fix: HTTP 422 with a one-sentence `detail`."""

    def __init__(self, message: str) -> None:
        super().__init__(status_code=422, detail=message)


class ServerMisconfigured(HTTPException):
    """The server's configuration keeps a pipeline from running (the caller did nothing wrong): HTTP 503 with the
    one sentence that names the setting or parameter to change."""

    def __init__(self, message: str) -> None:
        super().__init__(status_code=503, detail=message)


# Errors of the server's configuration that show only when a pipeline warms up or runs (ValueErrors among them are
# caught before the caller's 422).
CONFIGURATION_ERRORS: tuple[type[BaseException], ...] = (
    LanguageModelMismatch,  # two spacy_model values in the process's pipelines
    LanguageModelMissing,  # SPACY_MODEL / spacy_model names no installed spaCy pipeline
    ResearchBudgetInvalid,  # the research pipeline's metadata.question_budget_s (a CatalogError, so a ValueError)
)


def catalog() -> Any:
    """The catalog of the server's runtime (started, with the process's set-up, by the first wrapper)."""
    return process_runtime().catalog


def parse_day(value: str | None, field: str) -> dt.date | None:
    """An ISO date (YYYY-MM-DD) from a request, or a clear 422."""
    return input_date(value, field, InvalidRequest)


def require_text(value: str | None, field: str, max_chars: int = 20_000) -> str:
    """A non-blank, bounded text from a request, stripped, or a clear 422."""
    try:
        return bounded_text(field, value, max_chars)
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None


def user_error_message(exc: BaseException) -> str:
    """The first line of an error the caller caused (no traceback, no internals)."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"{where}: {first.get('msg', 'invalid value')}" if where else str(first.get("msg", "invalid value"))
    text = str(exc).strip()
    return cut(text.splitlines()[0], 500) if text else type(exc).__name__


def as_payload(model: BaseModel) -> Any:
    """A response model as plain JSON values.

    The endpoint's annotated model still types and validates the HTTP response; the MCP tool, which would
    otherwise answer with the model's Python repr, answers with this JSON.
    """
    return model.model_dump(mode="json")


class CatalogPipelineWrapper(BasePipelineWrapper):
    """A Hayhooks wrapper over one named pipeline of the catalog."""

    pipeline_name: ClassVar[str] = ""

    def setup(self) -> None:
        """Load the catalog and the pipeline; raises (Hayhooks then skips this wrapper) if it is not there."""
        if not self.pipeline_name:
            raise ValueError("a CatalogPipelineWrapper must name its pipeline")
        self.catalog = catalog()
        if self.pipeline_name not in self.catalog.names():
            raise LookupError(f"the catalog has no pipeline named {self.pipeline_name!r}")
        self.pipeline = self.catalog.get(self.pipeline_name)

    def run_catalog(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Run the pipeline with the named inputs (None values left out); the named outputs."""
        try:
            return self.catalog.run(
                self.pipeline_name, {key: value for key, value in inputs.items() if value is not None}
            )
        except CONFIGURATION_ERRORS as exc:
            raise ServerMisconfigured(user_error_message(exc)) from exc
        except (ValueError, ValidationError, TypeError) as exc:
            raise InvalidRequest(user_error_message(exc)) from exc

    @staticmethod
    def raise_for_status(status: Any) -> None:
        """A 503 with the source's own message when a pipeline's status output says it failed."""
        kind = getattr(getattr(status, "status", None), "value", None)
        if kind in ("error", "timeout"):
            raise HTTPException(status_code=503, detail=f"{status.source}: {status.message}")
