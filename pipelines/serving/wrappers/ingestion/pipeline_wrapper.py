"""Hayhooks wrapper adding a text or a web page to the knowledge base: `POST /ingestion/run`, MCP tool `ingestion`."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import HTTPException
from hayhooks import BasePipelineWrapper

from components.web.ingest import UrlNotIngested, UrlRefused, ingest_url
from ingest.ingestor import Ingestor, document_id_for
from pipelines.serving.catalog_wrapper import (
    CONFIGURATION_ERRORS,
    InvalidRequest,
    ServerMisconfigured,
    as_payload,
    parse_day,
    require_text,
    user_error_message,
)
from pipelines.serving.models import IngestResult

_MAX_TEXT = 2_000_000


class PipelineWrapper(BasePipelineWrapper):
    """Ingestion through the one ingestion service (`ingest.ingestor.Ingestor`), as the CLI and the app do."""

    def setup(self) -> None:
        self.ingestor = Ingestor()
        self.ingestor.warm_up()

    def run_api(
        self,
        text: str | None = None,
        url: str | None = None,
        title: str | None = None,
        source: str | None = None,
        doc_type: Literal["txt", "md", "html"] = "txt",
        date: str | None = None,
    ) -> IngestResult:
        """Add a text, or the page at a URL, to the knowledge base (chunked, embedded, graph facts extracted).

        :param text: The text to ingest; give either text or url.
        :param url: A web page to fetch (through Firecrawl) and ingest; with text, the text's own URL.
        :param title: The document's title; default: the source.
        :param source: Where the text came from (an id or a name); the same source again replaces the document.
        :param doc_type: How to read the text: txt, md (Markdown) or html.
        :param date: The document's date (YYYY-MM-DD), used by as_of questions.
        :returns: Whether the document was added, replaced or unchanged, its id and the chunks written.
        """
        day = parse_day(date, "date")
        if text is None or not text.strip():
            if not url or not url.strip():
                raise InvalidRequest("give a text or a url to ingest")
            return self._ingest_url(url.strip(), title, day)
        body = require_text(text, "text", max_chars=_MAX_TEXT)
        origin = (source or url or "").strip() or f"text:{title.strip() if title and title.strip() else 'untitled'}"
        try:
            report = self.ingestor.ingest_text(
                body, title=(title or origin).strip(), source=origin, doc_type=doc_type, url=url or None, date=day
            )
        except CONFIGURATION_ERRORS as exc:  # e.g. SPACY_MODEL names no installed pipeline: the server's to fix
            raise ServerMisconfigured(user_error_message(exc)) from exc
        except ValueError as exc:
            raise InvalidRequest(user_error_message(exc)) from exc
        return as_payload(_result(origin, report))

    def _ingest_url(self, url: str, title: str | None, day: Any) -> IngestResult:
        if not url.startswith(("http://", "https://")):
            raise InvalidRequest("url must start with http:// or https://")
        try:
            report = ingest_url(url, ingestor=self.ingestor)
        except UrlRefused as exc:  # the address policy refused the URL itself: the caller's to fix
            raise InvalidRequest(user_error_message(exc)) from exc
        except UrlNotIngested as exc:
            # The page could not be fetched (no Firecrawl key, refused, slow): the fetcher's one sentence.
            raise HTTPException(status_code=502, detail=user_error_message(exc)) from exc
        except CONFIGURATION_ERRORS as exc:
            raise ServerMisconfigured(user_error_message(exc)) from exc
        except ValueError as exc:
            raise InvalidRequest(user_error_message(exc)) from exc
        return as_payload(_result(url, report))


def _result(source: str, report: Any) -> IngestResult:
    outcome = "failed"
    if report.added:
        outcome = "added"
    elif report.replaced:
        outcome = "replaced"
    elif report.skipped:
        outcome = "unchanged"
    message = report.failed[0][1] if report.failed else report.summary()
    # Unchanged documents are not written, so the report has no id for them; the id follows from the source.
    document_id = report.document_ids.get(source) or next(iter(report.document_ids.values()), None)
    if document_id is None and not report.failed:
        document_id = document_id_for(source)
    return IngestResult(
        source=source,
        outcome=outcome,
        document_id=document_id,
        chunks_written=report.chunks_written,
        seconds=round(report.seconds, 3),
        message=message,
    )
