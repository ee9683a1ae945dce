"""`ArxivSearch`: the research pipeline's arXiv branch (papers' abstracts, or full text from the PDF when asked)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from haystack import component

from components.arxiv.access import ArxivAccess, ArxivPaper, build_query, date_range, normalise_id, pdf_text
from components.contracts import (
    ARXIV_SORT_OPTIONS,
    ContextChunk,
    SourceType,
)
from components.contracts.branch import BranchQuery, branch_run
from components.contracts.selection import filter_names
from components.resilience import SourceError, SourceResult
from components.resilience.scheduling import map_until, source_twin
from components.serialization import with_base_parameters
from components.settings import setting_or
from components.validation import bounded_count, bounded_text, positive_int, string_list
from components.web.chunking import fetched_chunk, pick_chunks, query_cosines, query_terms, text_chunks
from components.web.fetching_source import FetchingSource

SOURCE = "arxiv"
MAX_RESULTS = 50
MAX_QUERY_CHARS = 1000
SORT_OPTIONS = ARXIV_SORT_OPTIONS


@component
class ArxivSearch(FetchingSource):
    """Searches arXiv and returns one chunk per paper (its abstract), or chunks of the PDF's text when asked.

    Filters: `categories` (any of), `date_from` / `date_to` (submission dates, inclusive) and `as_of` (papers
    submitted on or before it). Requests to the API are spaced `ARXIV_MIN_INTERVAL_S` apart across the process.
    When full text is asked and a PDF cannot be read in time, the paper's abstract stands in (status `partial`); so
    it does when the PDF link (or a redirect) names an address the address policy refuses
    (`allow_private_addresses=None`: the ALLOW_PRIVATE_ADDRESSES setting).
    Chunk relevance is the cosine to the question from the local model. The run never raises.

    Usage:
    ```python
    arxiv = ArxivSearch(num_results=5, categories=["cs.CL"])
    arxiv.warm_up()
    result = arxiv.run(query="retrieval-augmented generation", date_from="2020-01-01")
    [doc.meta["paper_id"] for doc in result["documents"]], result["status"].status
    ```
    """

    SOURCE, API_URL_SETTING = SOURCE, "arxiv_api_url"

    @with_base_parameters(FetchingSource.__init__)
    def __init__(
        self,
        num_results: int = 5,
        sort_by: str = "relevance",
        categories: list[str] | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
        full_text: bool = False,
        max_chunks_per_paper: int = 4,
        min_interval_s: float | None = None,
        **shared: Any,
    ) -> None:
        # None: the setting in force when the component is built (ARXIV_MIN_INTERVAL_S; the others as in
        # `FetchingSource`, the URL ARXIV_API_URL); `to_dict` writes the value used.
        self.num_results = positive_int("num_results", num_results)
        self.max_chunks_per_paper = positive_int("max_chunks_per_paper", max_chunks_per_paper)
        self.categories = string_list("categories", categories)
        if sort_by not in SORT_OPTIONS:
            raise ValueError(f"sort_by must be one of {', '.join(SORT_OPTIONS)}")
        try:
            date_range(date_from, date_to)
        except SourceError as exc:
            raise ValueError(str(exc)) from None
        if min_interval_s is not None and min_interval_s < 0:
            raise ValueError("min_interval_s cannot be negative")
        self.sort_by = sort_by
        self.date_from = date_from
        self.date_to = date_to
        self.full_text = full_text
        self.min_interval_s = setting_or(min_interval_s, "arxiv_min_interval_s")
        FetchingSource.__init__(self, **shared)

    def _policy_overrides(self) -> dict[str, Any]:
        return {"min_interval_s": self.min_interval_s}  # requests to the API spaced across the process

    def _load_client(self) -> None:
        import lxml.etree  # noqa: F401 - imported here so a search's time budget is spent on the search
        import pypdf  # noqa: F401

    @branch_run
    def run(
        self,
        branch: BranchQuery,
        num_results: int | None = None,
        sort_by: str | None = None,
        categories: list[str] | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
        full_text: bool | None = None,
    ) -> dict[str, Any]:
        """Search arXiv for the branch's `query` (plain words, or arXiv's field syntax such as
        `ti:transformer AND au:vaswani`).

        Of the research `filters`, only `arxiv_categories` applies (as `categories` when that is not given).

        :returns: `documents`: chunks as Documents (meta per `ContextChunk`/`ArxivMetadata`), best first;
            `status`: the `SourceStatus` of this run; `branch`: the same documents as the ranker's `BranchDocuments`.
        """

        def prepare() -> Callable[[], SourceResult]:
            wanted = bounded_count("num_results", num_results, self.num_results, MAX_RESULTS)
            order = sort_by or self.sort_by
            asked = categories or filter_names(branch.filters, "arxiv_categories")
            cats = string_list("categories", asked, self.categories)
            want_full_text = self.full_text if full_text is None else bool(full_text)
            text = bounded_text("the question", branch.query, MAX_QUERY_CHARS)
            if order not in SORT_OPTIONS:
                raise SourceError(f"sort_by must be one of {', '.join(SORT_OPTIONS)}, not {order!r}")
            start, end = date_range(
                date_from if date_from is not None else self.date_from,
                date_to if date_to is not None else self.date_to,
                branch.as_of,
            )
            try:
                paper_id: str | None = normalise_id(text)  # a bare identifier is looked up, not searched for
            except SourceError:
                paper_id = None
            search_query = None if paper_id else build_query(text, cats, start, end)
            api_url = self.api_url
            budget = self._guard.policy.timeout_s

            def work() -> SourceResult:
                started = time.monotonic()
                access = ArxivAccess(
                    api_url,
                    request_timeout_s=max(1.0, budget - 0.5),
                    page_interval_s=self.min_interval_s,
                    max_bytes=self.max_response_bytes,
                )
                if paper_id:
                    papers = access.fetch([paper_id])
                else:
                    papers = access.search(search_query, max_results=wanted, sort_by=order)
                # The API filters already; checking again keeps a mirror's looser filtering from leaking through.
                papers = [
                    paper
                    for paper in papers
                    if (start is None or paper.published is None or paper.published >= start)
                    and (end is None or (paper.published is not None and paper.published <= end))
                    and (not cats or set(cats) & set(paper.categories))
                ]
                if not papers:
                    return SourceResult(chunks=[], total_found=0)
                self.warm_up()
                deadline = started + max(budget - 1.0, budget * 0.7)
                texts, note = self._texts(papers, text, want_full_text, deadline)
                chunks = self._chunks(papers, texts, text, branch.query_embedding)
                return SourceResult(chunks=chunks, total_found=len(papers), partial=note)

            return work

        return self._guard.branch_outputs(
            branch.sources, "arXiv not selected for this question", prepare, set_up=self.warm_up
        )

    run_async = source_twin(run, SOURCE)

    def _texts(
        self, papers: list[ArxivPaper], query: str, full_text: bool, deadline: float
    ) -> tuple[dict[str, list[tuple[int, int, str, str]]], str | None]:
        """Per paper: (chunk index, total chunks, text, "abstract" | "full_text") pieces, and a note on fallbacks."""
        pieces: dict[str, list[tuple[int, int, str, str]]] = {
            paper.paper_id: [(0, 1, paper.abstract, "abstract")] for paper in papers if paper.abstract
        }
        if not full_text:
            return pieces, None
        fallbacks: list[str] = []
        timeout_s = max(0.5, deadline - time.monotonic())
        allow_private = self.allow_private_addresses
        futures, done, not_done = map_until(
            lambda paper: pdf_text(paper.pdf_url, timeout_s, allow_private=allow_private),
            [paper for paper in papers if paper.pdf_url],
            deadline,
            workers=3,
            name="arxiv-pdf",
        )
        terms = query_terms(query)
        for future in done:
            paper = futures[future]
            try:
                body = future.result()
            except Exception as exc:  # noqa: BLE001 - any PDF problem means: use the abstract
                fallbacks.append(f"{paper.paper_id} ({exc})")
                continue
            parts = text_chunks(body, self.chunk_tokens, self._model.name)
            keep = pick_chunks(parts, terms, self.max_chunks_per_paper)
            if keep:
                pieces[paper.paper_id] = [(index, len(parts), parts[index], "full_text") for index in keep]
        fallbacks += [f"{futures[future].paper_id} (PDF not read in time)" for future in not_done]
        fallbacks += [f"{paper.paper_id} (no PDF link)" for paper in papers if not paper.pdf_url]
        note = f"full text unavailable for {', '.join(fallbacks)}; used the abstract" if fallbacks else None
        return pieces, note

    def _chunks(
        self,
        papers: list[ArxivPaper],
        texts: dict[str, list[tuple[int, int, str, str]]],
        query: str,
        query_embedding: list[float] | None,
    ) -> list[ContextChunk]:
        rows = [(paper, *piece) for paper in papers for piece in texts.get(paper.paper_id, [])]
        if not rows:
            return []
        texts = [f"{paper.title}\n{body}" for paper, _, _, body, _ in rows]
        cosines = query_cosines(self._model, query, query_embedding, texts)
        chunks = [
            fetched_chunk(
                SourceType.ARXIV,
                f"arxiv\n{paper.paper_id}{paper.version or ''}\n{kind}\n{index}",
                body,
                cosine,
                source_id=paper.paper_id,
                source_title=paper.title,
                source_url=paper.arxiv_url,
                source_date=paper.published,
                metadata={**paper.metadata(), "chunk_index": index, "paper_total_chunks": total, "text_source": kind},
            )
            for (paper, index, total, body, kind), cosine in zip(rows, cosines, strict=True)
        ]
        chunks.sort(key=lambda chunk: chunk.semantic_relevance, reverse=True)
        return chunks
