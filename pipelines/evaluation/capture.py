"""Capture and replay of the offline answer step: what the answer generator was given, per question.

`research eval QUESTIONS.jsonl --capture FILE.jsonl` records, for every question the research variant asks, the
question, its analysis and the chunks the extractive answer generator received (without their vectors): the ranked
chunks and, after them, those the per-hop retrieval (`HopRetriever`) added for a chain's later hop, each with its
`meta["hop"]`. It also records what that stage did (`hops`: its status when it searched, None when the question
needed no search), which the answer does not read but which tells a chain whose later hop was retrieved from one
whose bridge was never found. The answer step can then be run again on exactly those chunks (`replay`), which is how
answer rules and the answer confidence are measured and fitted without running retrieval again. Captures made before
the per-hop retrieval (no `hops` key, no added chunks) load and replay as they are.

Usage:
```python
from pipelines.evaluation.capture import load_capture, replay

records = load_capture(Path("squad.capture.jsonl"))
for record, out in replay(records, ExtractiveAnswerGenerator()):
    out["short_answer"], record["answers"]
```
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from haystack import Document

from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.generation.hop_retriever import HopRetriever
from components.generation.question_analysis import QuestionAnalysis
from pipelines.evaluation.jsonl import load_jsonl

_VECTOR_KEYS = ("embedding", "sparse_embedding")


def _document_record(document: Document) -> dict[str, Any]:
    record = document.to_dict(flatten=False)
    for key in _VECTOR_KEYS:
        record.pop(key, None)
    return record


@contextlib.contextmanager
def capturing() -> Iterator[dict[str, dict[str, Any]]]:
    """While open, every `ExtractiveAnswerGenerator.run` call is recorded by its query (the last call of a query
    kept) into the dict it yields, with what the `HopRetriever` run on the same query did (`hops`)."""
    original = ExtractiveAnswerGenerator.run
    original_hops = HopRetriever.run
    records: dict[str, dict[str, Any]] = {}
    hops: dict[str, dict[str, Any] | None] = {}
    lock = threading.Lock()

    # A pipeline built while the capture is open reads the stage's sockets from `run`: `wraps` keeps the signature
    # (`inspect.signature` follows it) and the output types of the method it wraps.
    @functools.wraps(original_hops)
    def run_hops(self: Any, query: str, **inputs: Any) -> dict[str, Any]:
        out = original_hops(self, query=query, **inputs)
        status = out.get("status")
        with lock:
            hops[query] = (
                None
                if status is None
                else {"status": status.status.value, "found": status.total_found, "message": status.message}
            )
        return out

    def run(
        self: Any, query: str, documents: list[Document], analysis: QuestionAnalysis | dict | None = None
    ) -> dict[str, Any]:
        with lock:
            records[query] = {
                "query": query,
                # The pipeline hands the analysis on as itself; the capture keeps the JSON `from_dict` reads.
                "analysis": analysis.to_dict() if isinstance(analysis, QuestionAnalysis) else analysis,
                "documents": [_document_record(document) for document in documents],
            }
            if query in hops:  # the pipeline's hop stage ran on this question just before
                records[query]["hops"] = hops[query]
        return original(self, query=query, documents=documents, analysis=analysis)

    ExtractiveAnswerGenerator.run = run  # type: ignore[method-assign]
    HopRetriever.run = run_hops  # type: ignore[method-assign]
    try:
        yield records
    finally:
        ExtractiveAnswerGenerator.run = original  # type: ignore[method-assign]
        HopRetriever.run = original_hops  # type: ignore[method-assign]


def attach_gold(captured: dict[str, dict[str, Any]], questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The captured calls of `questions` (by their text), each with the question's id and gold answers."""
    out = []
    for question in questions:
        # The pipeline strips the question it is given; the capture is keyed by what the generator received.
        call = captured.get(str(question["question"])) or captured.get(str(question["question"]).strip())
        if call is not None:
            gold = {
                "id": question["id"],
                "index": question.get("index"),
                "answers": list(question.get("answers") or []),
                "gold_doc_ids": list(question.get("gold_doc_ids") or []),  # SQuAD's halves are by article
            }
            out.append({**gold, **call})
    return out


def write_capture(records: list[dict[str, Any]], path: Path) -> None:
    """Write captured records as JSON Lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


def load_capture(path: Path) -> list[dict[str, Any]]:
    """The records of a capture file (`{"id", "query", "analysis", "documents", "answers"}` per line, and `hops` in a
    capture made with the per-hop retrieval)."""
    return load_jsonl(path, ("query", "documents"))


def captured_documents(record: dict[str, Any]) -> list[Document]:
    """The ranked chunks of a captured record, as Haystack documents."""
    return [Document.from_dict(document) for document in record["documents"]]


def replay(records: list[dict[str, Any]], generator: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Each record with the generator's output on its captured chunks and analysis."""
    generator.warm_up()
    for record in records:
        documents = captured_documents(record)
        yield record, generator.run(query=record["query"], documents=documents, analysis=record["analysis"])
