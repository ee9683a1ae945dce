"""`research eval compare BEFORE AFTER`: two runs of the same evaluations, answer for answer and fact for fact.

A refactor that should not change behaviour is checked by running the development sets before and after it and
comparing the runs (`docs/architecture.md`, "Checking a refactor"). BEFORE and AFTER are either

- two folders: every question evaluation found under them (`<dir>/results/<variant>.jsonl`, as `research eval
  QUESTIONS.jsonl --out <dir>` writes) and every timeline facts file (`*facts.jsonl`, as `research eval timelines
  --facts FILE` writes) is paired with the file at the same place under the other folder; or
- two files of the same kind (a variant's results, or timeline facts).

Per question (matched by its id) the answer, the short answer, the confidence (the answer's and every part's: its
short answer, confidence and whether it is shown), the cited sentences with their chunk ids, the ranked documents,
the ranked chunks (by chunk id, in order: a chunk that moved, came or went, so two chunks of one document that swap
ranks are seen; many changes of one question are summarised in one line), the source statuses and any error are
compared; latencies are not. Per timeline (system and entity) every fact is compared: its document, sentence and
date, and the order of the facts. A question or timeline only one run has is a difference too. Every difference
is printed, then their count; the exit code is 1 when there is any, 2 when the runs cannot be compared (as `diff`).

Usage:
```python
differences = compare_paths(Path("before"), Path("after"))
print(format_differences(differences))
```
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.evaluation.jsonl import EvaluationInputError, load_jsonl

FACTS_SUFFIX = "facts.jsonl"
# The fields of a question's record that say what the analyst was told; `latency_ms` is left out on purpose.
ANSWER_FIELDS = ("answer", "short_answer", "confidence", "citations", "ranked_doc_ids", "statuses", "error")
# The ranked chunks' changes of one question listed one by one up to this many; more are summarised in one line.
LISTED_CHUNK_CHANGES = 4


@dataclass(frozen=True)
class Difference:
    """One way two runs differ: where (file, then question id or timeline), what (`field`), and the two values."""

    where: str
    field: str
    before: Any
    after: Any
    detail: str = ""  # what changed in words, printed instead of the two values (the ranked chunks)

    def line(self) -> str:
        if self.detail:
            return f"{self.where}: {self.field}: {self.detail}"
        return f"{self.where}: {self.field}: {_show(self.before)} -> {_show(self.after)}"


def _show(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _same(before: Any, after: Any, tolerance: float) -> bool:
    """Equal, numbers within `tolerance` (0: exactly), recursively through lists and dicts."""
    if isinstance(before, bool) or isinstance(after, bool):
        return before is after
    if isinstance(before, int | float) and isinstance(after, int | float):
        if math.isnan(before) or math.isnan(after):
            return math.isnan(before) and math.isnan(after)
        return abs(before - after) <= tolerance
    if isinstance(before, dict) and isinstance(after, dict):
        return before.keys() == after.keys() and all(_same(before[k], after[k], tolerance) for k in before)
    if isinstance(before, list) and isinstance(after, list):
        return len(before) == len(after) and all(_same(b, a, tolerance) for b, a in zip(before, after, strict=True))
    return before == after


# -- question runs --------------------------------------------------------------------------------------------------


def _confidence(record: dict[str, Any], recorded: bool) -> dict[str, Any]:
    """The answer's confidence (when both runs recorded it) and every part's short answer, confidence and shown."""
    parts = [
        {key: part.get(key) for key in ("question", "short_answer", "short_answer_confidence", "sure")}
        for part in record.get("parts") or []
    ]
    out: dict[str, Any] = {"parts": parts}
    if recorded:
        out["answer"] = record.get("short_answer_confidence")
    return out


def answer_view(record: dict[str, Any], *, with_answer_confidence: bool = True) -> dict[str, Any]:
    """What is compared of one question's record (`ANSWER_FIELDS`)."""
    return {
        "answer": record.get("answer"),
        "short_answer": record.get("short_answer") or "",
        "confidence": _confidence(record, with_answer_confidence),
        "citations": [[cited.get("sentence"), cited.get("chunk_id")] for cited in record.get("citations") or []],
        "ranked_doc_ids": list(record.get("ranked_doc_ids") or []),
        "statuses": dict(record.get("statuses") or {}),
        "error": record.get("error"),
    }


def _ranked_chunks(record: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(chunk id, document id) of a question's ranked chunks in rank order; None for a run that did not record them."""
    chunk_ids = record.get("ranked_chunk_ids")
    if chunk_ids is None:
        return None
    doc_ids = list(record.get("ranked_doc_ids") or [])
    return [(str(chunk_id), str(doc_ids[i]) if i < len(doc_ids) else "?") for i, chunk_id in enumerate(chunk_ids)]


def chunk_changes(before: Sequence[tuple[str, str]], after: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """How the ranked chunks (chunk id, document id) changed, as (kind, words) with kind "moved", "gone" or "new", in
    the order of their rank before, then the new ones by their rank after: ("moved", "chunk c-8 of doc d.md rank 7 ->
    8"), ("gone", "chunk ... gone from rank 2"), ("new", "chunk ... new at rank 3")."""
    rank_before = {chunk: rank for rank, (chunk, _) in reversed(list(enumerate(before, start=1)))}
    rank_after = {chunk: rank for rank, (chunk, _) in reversed(list(enumerate(after, start=1)))}
    changes = []
    for rank, (chunk, doc) in enumerate(before, start=1):
        if rank_before[chunk] != rank:
            continue  # a chunk listed twice is described by its first rank
        if chunk not in rank_after:
            changes.append(("gone", f"chunk {chunk} of doc {doc} gone from rank {rank}"))
        elif rank_after[chunk] != rank:
            changes.append(("moved", f"chunk {chunk} of doc {doc} rank {rank} -> {rank_after[chunk]}"))
    for rank, (chunk, doc) in enumerate(after, start=1):
        if chunk not in rank_before and rank_after[chunk] == rank:
            changes.append(("new", f"chunk {chunk} of doc {doc} new at rank {rank}"))
    return changes


def _chunks_difference(where: str, before: list[tuple[str, str]], after: list[tuple[str, str]]) -> Difference | None:
    """One difference per question for its ranked chunks: every change listed when they are few, else their counts
    and the first few (a retrieval change can move every chunk of every question)."""
    old, new = [chunk for chunk, _ in before], [chunk for chunk, _ in after]
    if old == new:
        return None  # the same chunks; a changed document id is reported by `ranked_doc_ids`
    changes = chunk_changes(before, after)
    words = [text for _, text in changes]
    if len(changes) > LISTED_CHUNK_CHANGES:
        counts = ", ".join(f"{sum(k == kind for k, _ in changes)} {kind}" for kind in ("moved", "new", "gone"))
        shown = "; ".join(words[: LISTED_CHUNK_CHANGES - 1])
        detail = f"{counts} of {len(old)} -> {len(new)} chunks; first: {shown}; ..."
    else:
        detail = "; ".join(words)  # empty when only a repeated chunk's second rank changed: the lists are shown
    return Difference(where, "ranked_chunks", old, new, detail)


def compare_answers(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], where: str = "", tolerance: float = 0.0
) -> list[Difference]:
    """The differences between two runs of one variant over a question set, question by question (by id)."""
    prefix = f"{where} " if where else ""
    old = {str(record["id"]): record for record in before}
    new = {str(record["id"]): record for record in after}
    differences: list[Difference] = []
    for qid in [*old, *(qid for qid in new if qid not in old)]:
        if qid not in new:
            differences.append(Difference(f"{prefix}{qid}", "question", "asked", "missing"))
            continue
        if qid not in old:
            differences.append(Difference(f"{prefix}{qid}", "question", "missing", "asked"))
            continue
        # A run made before the answer's own confidence was recorded still compares its parts' confidences.
        recorded = "short_answer_confidence" in old[qid] and "short_answer_confidence" in new[qid]
        was = answer_view(old[qid], with_answer_confidence=recorded)
        now = answer_view(new[qid], with_answer_confidence=recorded)
        for name in ANSWER_FIELDS:
            if not _same(was[name], now[name], tolerance):
                differences.append(Difference(f"{prefix}{qid}", name, was[name], now[name]))
        # A run made before the ranked chunks were recorded is compared by its ranked documents only.
        chunks_before, chunks_after = _ranked_chunks(old[qid]), _ranked_chunks(new[qid])
        if chunks_before is not None and chunks_after is not None:
            moved = _chunks_difference(f"{prefix}{qid}", chunks_before, chunks_after)
            if moved is not None:
                differences.append(moved)
    return differences


# -- timeline facts -------------------------------------------------------------------------------------------------


def _timelines(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {f"{record['system']}/{record['entity']}": list(record.get("facts") or []) for record in records}


def _fact_key(fact: dict[str, Any]) -> tuple[str, str]:
    return str(fact.get("document")), str(fact.get("sentence"))


def compare_facts(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], where: str = ""
) -> list[Difference]:
    """The differences between two runs' timelines, fact for fact: a fact only one has, a fact whose date changed,
    and (when the facts are the same) a changed order."""
    prefix = f"{where} " if where else ""
    old, new = _timelines(before), _timelines(after)
    differences: list[Difference] = []
    for name in [*old, *(name for name in new if name not in old)]:
        label = f"{prefix}{name}"
        if name not in old:
            differences.append(Difference(label, "timeline", "missing", "built"))
            continue
        if name not in new:
            differences.append(Difference(label, "timeline", "built", "missing"))
            continue
        was = {_fact_key(fact): fact for fact in old[name]}
        now = {_fact_key(fact): fact for fact in new[name]}
        for key, fact in was.items():
            if key not in now:
                differences.append(Difference(label, "fact", fact, None))
            elif fact.get("date") != now[key].get("date"):
                field = f"date of {_show(key[1], 80)}"
                differences.append(Difference(label, field, fact.get("date"), now[key].get("date")))
        for key, fact in now.items():
            if key not in was:
                differences.append(Difference(label, "fact", None, fact))
        if was.keys() == now.keys() and len(old[name]) == len(new[name]):
            order_before = [_fact_key(fact) for fact in old[name]]
            order_after = [_fact_key(fact) for fact in new[name]]
            if order_before != order_after:
                first = next(i for i, (b, a) in enumerate(zip(order_before, order_after, strict=True)) if b != a)
                differences.append(
                    Difference(label, f"order from fact {first + 1}", order_before[first][1], order_after[first][1])
                )
        elif len(was) != len(old[name]) or len(now) != len(new[name]):
            differences.append(Difference(label, "facts", len(old[name]), len(new[name])))
    return differences


# -- runs on disk ---------------------------------------------------------------------------------------------------


def _kind(path: Path) -> str:
    return "facts" if path.name.endswith(FACTS_SUFFIX) else "answers"


def _run_files(folder: Path) -> dict[str, Path]:
    """A run folder's comparable files by their place in it: question results and timeline facts."""
    found = {
        path.relative_to(folder).as_posix(): path
        for path in folder.rglob("*.jsonl")
        if path.parent.name == "results" or path.name.endswith(FACTS_SUFFIX)
    }
    return dict(sorted(found.items()))


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.stat().st_size:
        return []  # a variant that was started on no question
    required = ("system", "entity", "facts") if _kind(path) == "facts" else ("id",)
    return load_jsonl(path, required)


def compare_files(before: Path, after: Path, where: str = "", tolerance: float = 0.0) -> list[Difference]:
    """The differences between two results files or two facts files."""
    old, new = _load(before), _load(after)
    try:
        if _kind(before) == "facts":
            return compare_facts(old, new, where)
        return compare_answers(old, new, where, tolerance)
    except (AttributeError, TypeError) as exc:  # a field of another type than the evaluation writes (a list of text)
        raise EvaluationInputError(
            f"{before.name} and {after.name} cannot be compared: a record has a field of another shape than "
            f"evaluation output ({exc})"
        ) from exc


def compare_paths(before: Path, after: Path, tolerance: float = 0.0) -> list[Difference]:
    """The differences between two run folders (every evaluation file under them, paired by place) or two files."""
    for path in (before, after):
        if not path.exists():
            raise EvaluationInputError(f"{path} does not exist")
    if before.is_file() and after.is_file():
        if _kind(before) != _kind(after):
            raise EvaluationInputError(f"{before.name} and {after.name} are not the same kind of evaluation output")
        return compare_files(before, after, "", tolerance)
    if before.is_file() or after.is_file():
        raise EvaluationInputError("compare two run folders or two files, not a folder with a file")
    old, new = _run_files(before), _run_files(after)
    if not old and not new:
        raise EvaluationInputError(
            f"neither {before} nor {after} holds evaluation results (results/*.jsonl) or timeline facts (*facts.jsonl)"
        )
    differences: list[Difference] = []
    for place in [*old, *(place for place in new if place not in old)]:
        if place not in new or place not in old:
            state = {True: "present", False: "missing"}
            differences.append(Difference(place, "file", state[place in old], state[place in new]))
            continue
        differences.extend(compare_files(old[place], new[place], place, tolerance))
    return differences


def count_compared(before: Path) -> int:
    """How many questions and timelines a run holds (for the summary line)."""
    files = [before] if before.is_file() else list(_run_files(before).values())
    return sum(len(_load(path)) for path in files)


def without_ranked_chunks(run: Path) -> int:
    """How many of a run's question records do not hold their ranked chunks (made before `ranked_chunk_ids` was
    recorded): those are compared by their ranked documents only."""
    files = [run] if run.is_file() else list(_run_files(run).values())
    return sum("ranked_chunk_ids" not in record for path in files if _kind(path) == "answers" for record in _load(path))


def format_differences(differences: Sequence[Difference]) -> str:
    """One line per difference."""
    return "\n".join(difference.line() for difference in differences)


# -- command line ---------------------------------------------------------------------------------------------------


EXIT_SAME, EXIT_DIFFERENT, EXIT_BAD_INPUT = 0, 1, 2  # as `diff`: 1 only ever means "the runs differ"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `research eval compare BEFORE AFTER` (`argv`: the arguments after `compare`): 0 when the runs
    are the same, 1 when they differ, 2 when they cannot be compared (the reason printed as one sentence)."""
    parser = argparse.ArgumentParser(
        prog="research eval compare",
        description="Compare two evaluation runs answer for answer (question results) and fact for fact (timeline "
        "facts).",
        epilog="Exit status: 0 when the runs are the same, 1 when they differ, 2 when they cannot be compared (a "
        "path that does not exist, files of different kinds, a file that is not JSON Lines, a bad option), as diff.",
    )
    parser.add_argument("before", type=Path, help="run folder (or results / facts file) before the change")
    parser.add_argument("after", type=Path, help="run folder (or file) after the change")
    parser.add_argument(
        "--tolerance", type=float, default=0.0, help="largest difference of two numbers counted as equal (default: 0)"
    )
    args = parser.parse_args(argv)  # a bad option exits with argparse's status, 2
    try:
        if args.tolerance < 0:
            raise EvaluationInputError("--tolerance must not be negative")
        differences = compare_paths(args.before, args.after, args.tolerance)
        compared = count_compared(args.before)
        unranked = {path: without_ranked_chunks(path) for path in (args.before, args.after)}
    except (EvaluationInputError, OSError) as exc:
        print(f"research eval compare: {_reason(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for path, count in unranked.items():
        if count:
            print(
                f"research eval compare: {count} answers of {path} do not record their ranked chunks (a run made "
                "before they were recorded); their ranked documents are compared, not the chunks' order",
                file=sys.stderr,
            )
    if differences:
        print(format_differences(differences))
    print(f"{len(differences)} differences over {compared} answers and timelines")
    return EXIT_DIFFERENT if differences else EXIT_SAME


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename} cannot be read ({exc.strerror or type(exc).__name__})"
    return str(exc)
