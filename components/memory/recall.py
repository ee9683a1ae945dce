"""`MemoryRecall`: the research pipeline's memory branch: earlier interactions as citable evidence."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

import numpy as np
from haystack import component

from components.contracts import SourceStatus
from components.contracts.branch import BranchQuery, branch_run
from components.memory.backends import MemoryComponent
from components.memory.store import (
    MAX_NUM_RESULTS,
    MAX_QUERY_CHARS,
    RecalledInteraction,
    RecallQuery,
    interaction_to_chunk,
    memory_chunk_text,
    mentioned_entities,
    parse_as_of,
    parse_time_window,
)
from components.resilience import SourceError, SourceResult
from components.resilience.scheduling import source_twin
from components.serialization import with_base_parameters
from components.text.phrases import capitalised_phrases
from components.validation import bounded_text, clamp, positive_int

SOURCE = "memory"


def _filter_values(filters: dict[str, Any] | None) -> dict[str, Any]:
    """session_id, user_id, date_from and date_to from flat keys or Haystack `==`/range conditions."""
    filters = filters or {}
    keys = ("session_id", "user_id", "date_from", "date_to")
    found = {key: filters[key] for key in keys if isinstance(filters.get(key), str)}
    stack = [filters]
    while stack:
        node = stack.pop()
        if "conditions" in node and isinstance(node["conditions"], list):
            if node.get("operator", "AND") == "AND":
                stack.extend(item for item in node["conditions"] if isinstance(item, dict))
            continue
        field = str(node.get("field", "")).removeprefix("meta.")
        operator, value = node.get("operator"), node.get("value")
        if field in ("session_id", "user_id") and operator == "==" and isinstance(value, str):
            found[field] = value
        elif field in ("source_date", "interaction_timestamp") and isinstance(value, str):
            if operator in (">=", ">"):
                found["date_from"] = value
            elif operator in ("<=", "<"):
                found["date_to"] = value
    return found


@component
class MemoryRecall(MemoryComponent):
    """Recalls earlier questions and answers that bear on the query, as memory chunks with full attribution.

    Works on the embedded PostgreSQL table (default) or on Zep (`backend="zep"`, `ZEP_API_URL`, `ZEP_API_KEY`).
    The store is made in `warm_up()` from that configuration (which the pipeline YAML holds, the key only as the
    name of its environment variable); `memory_store` passes one in instead (tests, notebooks; not serialised).
    Relevance is the cosine similarity of the local embedding model, the same scale as every other source.
    Never raises: faults become the `status`.

    Usage:
    ```python
    recall = MemoryRecall(num_results=3)
    recall.warm_up()
    result = recall.run(query="What did we find about Acme's revenue?", session_id="s1")
    result["documents"], result["status"]
    ```
    """

    SOURCE = SOURCE

    @with_base_parameters(MemoryComponent.__init__)
    def __init__(self, num_results: int = 3, **shared: Any) -> None:
        """`num_results`: how many interactions a run recalls by default; the others as in `MemoryComponent`."""
        self.num_results = min(positive_int("num_results", num_results), MAX_NUM_RESULTS)
        MemoryComponent.__init__(self, **shared)

    def _prepare(
        self,
        query: str,
        query_embedding: list[float] | None,
        filters: dict[str, Any] | None,
        as_of: str | dt.date | None,
        session_id: str | None,
        user_id: str | None,
        num_results: int | None,
        time_window: str | None,
    ) -> RecallQuery:
        text = bounded_text("the question", query, MAX_QUERY_CHARS)
        from_filters = _filter_values(filters)
        limit = self.num_results if num_results is None else clamp(num_results, 1, MAX_NUM_RESULTS, "num_results")
        try:
            window = parse_time_window(time_window)
            before = parse_as_of(as_of)
            date_to = parse_as_of(from_filters.get("date_to"))
            date_from = parse_as_of(from_filters.get("date_from"))
        except ValueError as exc:
            raise SourceError(str(exc)) from None
        if date_to is not None:
            before = date_to if before is None else min(before, date_to)
        since = None if window is None else (before or dt.datetime.now(dt.UTC)) - window
        if date_from is not None:
            # parse_as_of gives the end of the day; the lower bound is its start.
            start = (
                date_from - dt.timedelta(days=1, microseconds=1) if len(from_filters["date_from"]) == 10 else date_from
            )
            since = start if since is None else max(since, start)
        return RecallQuery(
            text=text,
            embedding=[float(value) for value in query_embedding] if query_embedding else None,
            session_id=session_id or from_filters.get("session_id"),
            user_id=user_id or from_filters.get("user_id"),
            limit=limit,
            since=since,
            before=before,
            entities=tuple(capitalised_phrases(text)),
        )

    def _relevance(self, query: RecallQuery, found: list[RecalledInteraction]) -> list[float]:
        """Cosine of each recalled interaction to the query on the local model (computed when the store did not)."""
        missing = [i for i, item in enumerate(found) if item.cosine is None]
        if missing and query.embedding:
            assert self._model is not None
            vectors = self._model.embed([memory_chunk_text(found[i].interaction) for i in missing])
            sims = vectors @ np.asarray(query.embedding, dtype=np.float32)
            for index, sim in zip(missing, sims, strict=True):
                found[index].cosine = float(sim)
        return [max(0.0, min(1.0, item.cosine or 0.0)) for item in found]

    def _embedded(self, query: RecallQuery) -> RecallQuery:
        """`query` with an embedding from the local model (a given vector of another size cannot be compared)."""
        self.warm_up()
        assert self._model is not None
        if query.embedding is not None and len(query.embedding) == self._model.dimension:
            return query
        return dataclasses.replace(query, embedding=self._model.embed_one(query.text).tolist())

    def _recall(self, query: RecallQuery) -> SourceResult:
        store = self._store()
        query = self._embedded(query)
        found = store.search(query)
        ranked = sorted(zip(found, self._relevance(query, found), strict=True), key=lambda pair: pair[1], reverse=True)
        chunks = [interaction_to_chunk(item, relevance) for item, relevance in ranked[: query.limit]]
        for chunk in chunks:
            chunk.metadata["related_entities"] = mentioned_entities(chunk.text, query.entities)
        return SourceResult(chunks=chunks)

    @branch_run
    def run(
        self,
        branch: BranchQuery,
        session_id: str | None = None,
        user_id: str | None = None,
        num_results: int | None = None,
        time_window: str | None = None,
    ) -> dict[str, Any]:
        """Recall up to `num_results` (default 3) earlier interactions relevant to the branch's `query`.

        :param branch: the question's inputs (`as_of`: only interactions before this date, whole day included, or
            date-time).
        :param time_window: only interactions within this duration before now (or before `as_of`): 24h, 7d, 2w.
        :returns: `documents`: memory chunks as Documents, best first; `status`: the run's `SourceStatus`;
            `branch`: the same documents as the ranker's `BranchDocuments`.
        """

        def prepare() -> SourceStatus | Callable[[], SourceResult]:
            filters = branch.filters
            if isinstance(filters, dict) and (filters.get("doc_types") or filters.get("document_ids")):
                # Remembered conversations are not documents: a filter naming document types or ids excludes them.
                return SourceStatus.skipped(SOURCE, "the filters restrict the question to certain documents")
            recall = self._prepare(
                branch.query,
                branch.query_embedding,
                filters,
                branch.as_of,
                session_id,
                user_id,
                num_results,
                time_window,
            )
            return lambda: self._recall(recall)

        return self._guard.branch_outputs(branch.sources, "memory was not among the selected sources", prepare)

    run_async = source_twin(run, SOURCE)
