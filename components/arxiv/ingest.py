"""`ingest_arxiv`: arXiv papers by identifier added to the knowledge base, with their arXiv metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.arxiv.access import ArxivAccess, ArxivPaper, normalise_id, pdf_text, strip_version
from components.resilience import ResiliencePolicy, SourceError, SourceGuard, SourceResult
from components.settings import get_settings, setting_or


@dataclass
class ArxivIngestOutcome:
    """What happened to each identifier: ingested (with the text used), not found, or failed."""

    report: Any = None  # ingest.report.IngestReport of the papers written
    papers: list[ArxivPaper] = field(default_factory=list)
    full_text: dict[str, bool] = field(default_factory=dict)  # paper_id -> True when the PDF's text was used
    not_found: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def fetch_papers(paper_ids: list[str], timeout_s: float | None = None) -> tuple[list[ArxivPaper], str | None]:
    """The papers for these identifiers (one API request, rate-limited and retried like the search); never raises.

    Returns the papers found and, when the request failed, the status message saying why.
    """
    settings = get_settings()
    policy = ResiliencePolicy.from_settings(timeout_s=timeout_s, min_interval_s=settings.arxiv_min_interval_s)
    holder: dict[str, list[ArxivPaper]] = {}

    def fetch() -> SourceResult:
        access = ArxivAccess(
            settings.arxiv_api_url,
            max(1.0, policy.timeout_s - 0.5),
            settings.arxiv_min_interval_s,
            max_bytes=settings.upstream_max_bytes,
        )
        holder["papers"] = access.fetch(paper_ids)
        return SourceResult(chunks=[], total_found=len(holder["papers"]))

    import lxml.etree  # noqa: F401 - the feed reader, imported before the clock starts

    _, status = SourceGuard("arxiv", policy).call(fetch)
    if not status.ok:
        return [], status.message or status.status.value
    return holder.get("papers", []), None


def ingest_arxiv(
    paper_ids: list[str],
    full_text: bool = False,
    *,
    ingestor: Any,
    timeout_s: float | None = None,
    allow_private: bool | None = None,
) -> ArxivIngestOutcome:
    """Add these arXiv papers to the knowledge base (`doc_type="arxiv"`, source `arxiv:<id>`) with `ingestor` (the
    ingestion service, `ingest.Ingestor`).

    The text is the abstract, or the PDF's full text when `full_text` is asked and the PDF is read within
    `timeout_s` (None: TOOL_TIMEOUT_S; the abstract otherwise) from an address the address policy allows
    (`allow_private`; None: ALLOW_PRIVATE_ADDRESSES; a refused link is reported in `failed`). Raises `ValueError`
    for identifiers that are not arXiv identifiers, and when arXiv cannot be reached (the message says why).
    """
    timeout_s = setting_or(timeout_s, "tool_timeout_s")
    allow_private = bool(setting_or(allow_private, "allow_private_addresses"))
    try:
        ids = [normalise_id(paper_id) for paper_id in paper_ids]
    except SourceError as exc:
        raise ValueError(str(exc)) from None
    if not ids:
        raise ValueError("give at least one arXiv identifier")
    papers, problem = fetch_papers(ids, timeout_s)
    if problem:
        raise ValueError(f"arXiv could not be asked for {', '.join(ids)}: {problem}")
    outcome = ArxivIngestOutcome(papers=papers)
    found = {paper.paper_id for paper in papers}
    outcome.not_found = [paper_id for paper_id in ids if strip_version(paper_id) not in found]
    for paper in papers:
        body = paper.abstract
        used_pdf = False
        if full_text and paper.pdf_url:
            try:
                body = f"{paper.title}\n\n{pdf_text(paper.pdf_url, timeout_s, allow_private=allow_private)}"
                used_pdf = True
            except Exception as exc:  # noqa: BLE001 - the abstract is the documented fallback
                outcome.failed.append((paper.paper_id, f"full text unavailable ({exc}); ingested the abstract"))
        outcome.full_text[paper.paper_id] = used_pdf
        metadata = {key: value for key, value in paper.metadata().items() if value not in (None, [], "")}
        metadata["text_source"] = "full_text" if used_pdf else "abstract"
        report = ingestor.ingest_text(
            body,
            paper.title,
            f"arxiv:{paper.paper_id}",
            doc_type="arxiv",
            url=paper.arxiv_url,
            date=paper.published,
            metadata=metadata,
        )
        outcome.report = report if outcome.report is None else outcome.report.merge(report)
    return outcome
