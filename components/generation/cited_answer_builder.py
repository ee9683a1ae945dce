"""`CitedAnswerBuilder`: resolves an answer's [n] markers to the numbered chunks they cite."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from haystack import Document, component, logging

from components.contracts import RankedDocuments, documents_of
from components.resilience.scheduling import async_twin
from components.serialization import InitParameterSerialization

logger = logging.getLogger(__name__)

# [3], [1, 2], [1][2], [2-4] and [2–4]
CITATION_MARK = re.compile(r"\[(\d+(?:\s*(?:,|-|–)\s*\d+)*)\]")


def cited_numbers(text: str) -> list[int]:
    """The source numbers a text cites, in order of first mention, ranges expanded."""
    numbers: dict[int, None] = {}
    for match in CITATION_MARK.finditer(text or ""):
        for part in match.group(1).split(","):
            bounds = [int(value) for value in re.split(r"\s*[-–]\s*", part.strip()) if value]
            span = range(bounds[0], bounds[-1] + 1) if len(bounds) == 2 and bounds[1] - bounds[0] <= 20 else bounds
            numbers.update(dict.fromkeys(span))
    return list(numbers)


@component
class CitedAnswerBuilder(InitParameterSerialization):
    """Maps every [n] in the answer to the n-th chunk (1-based) of the numbered list the prompt showed.

    Numbers outside 1..len(documents) are reported in `invalid_citations` and kept out of `citations`.

    Usage:
    ```python
    builder = CitedAnswerBuilder()
    out = builder.run(replies=["Paris is the capital [1]."], documents=ranked)
    out["citations"]  # [{"number": 1, "chunk_id": ..., "source_title": ..., ...}]
    ```
    """

    def __init__(self, strip_invalid: bool = True) -> None:
        """:param strip_invalid: remove markers that cite no listed chunk from the answer text."""
        if not isinstance(strip_invalid, bool):
            raise ValueError("strip_invalid must be true or false")
        self.strip_invalid = strip_invalid

    @component.output_types(answer=str, citations=list[dict], documents=list[Document], invalid_citations=list[int])
    def run(self, replies: list[str], documents: list[Document] | RankedDocuments) -> dict[str, Any]:
        """Resolve the citations of the first reply.

        :param replies: the generator's replies; the first is the answer.
        :param documents: the chunks in prompt order ([1] is the first), as a list or the ranker's `RankedDocuments`.
        :returns: `answer` (text), `citations` (one dict per cited chunk: number, chunk_id, source_type,
            source_id, source_title, source_url), `documents` (the numbered chunks, unchanged order, meta
            `citation_number` set), `invalid_citations` (numbers that name no chunk). No second view of the chunks: a
            stock Hayhooks deployment returns every output of this component, and the checks after the answer read
            the ranker's `RankedDocuments` (same chunks, same order).
        """
        answer = (replies[0] if replies else "").strip()
        numbered = []
        for number, document in enumerate(documents_of(documents), start=1):
            meta = {**(document.meta or {}), "citation_number": number}
            # `replace` keeps the chunk's own Document class (the contract's cheaply copied one) for the stages after.
            numbered.append(replace(document, meta=meta, blob=None, embedding=None, sparse_embedding=None))
        invalid = [number for number in cited_numbers(answer) if not 1 <= number <= len(numbered)]
        if invalid:
            logger.info("The answer cites sources that were not listed: {numbers}", numbers=invalid)
            if self.strip_invalid:
                answer = renumber_citations(answer, {number: number for number in range(1, len(numbered) + 1)})
        citations = []
        for number in cited_numbers(answer):
            if 1 <= number <= len(numbered):
                meta = numbered[number - 1].meta
                citations.append(
                    {
                        "number": number,
                        "chunk_id": numbered[number - 1].id,
                        "source_type": meta.get("source_type"),
                        "source_id": meta.get("source_id"),
                        "source_title": meta.get("source_title", ""),
                        "source_url": meta.get("source_url"),
                    }
                )
        return {"answer": answer, "citations": citations, "documents": numbered, "invalid_citations": invalid}

    # Numbering a handful of chunks costs less than a hop to a worker thread and back.
    run_async = async_twin(run)


def renumber_citations(text: str, numbers: dict[int, int]) -> str:
    """`text` with every cited number n written as `numbers[n]`; numbers not in `numbers` are removed, and a
    marker left with none goes with the space before it (ranges come out as lists: [2-4] -> [2, 3, 4])."""

    def rewrite(match: re.Match) -> str:
        kept = [numbers[number] for number in cited_numbers(match.group(0)) if number in numbers]
        return f"[{', '.join(str(number) for number in dict.fromkeys(kept))}]" if kept else ""

    text = CITATION_MARK.sub(rewrite, text)
    return re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", text)).strip()
