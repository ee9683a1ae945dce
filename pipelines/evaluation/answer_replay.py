"""The answer step replayed on captured question sets, and its scores per set and half: what `research fit answer`
and `research fit scoring` both read.

Usage:
```python
records = replay_sets({"squad": Path("squad.capture.jsonl")}, {"before": generator})["before"]
scores = scores_by_half(records, short_answer_scores)
scores["squad"]["check"]["token_f1"]
```
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pipelines.evaluation import metrics
from pipelines.evaluation.capture import captured_documents, load_capture
from pipelines.evaluation.halves import HALVES, half_of

POOLED = "all"  # the name of every set pooled, in `scores_by_half(..., pooled=True)`


def replay_sets(
    sets: Mapping[str, Path],
    generators: Mapping[str, Any],
    on_record: Callable[[str, str, dict[str, Any], Any], None] | None = None,
    halves: Sequence[str] = HALVES,
    select: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every captured question answered by each generator (question by question, so the parses each reads are
    shared): per variant name, `{"set", "half", "id", "answers", "parts", "candidates", "answer"}` per question
    (`candidates`: every part's short answer joined, shown or not). `on_record(variant, set name, record,
    generator)` runs after each answer (the scoring fit reads the generator's log there). Only the questions of
    `halves` are asked, and of those only the captured records `select` keeps, when given."""
    for generator in generators.values():
        generator.warm_up()
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in generators}
    for set_name, path in sets.items():
        for record in load_capture(Path(path)):
            half = half_of(set_name, record)
            if half not in halves or (select is not None and not select(record)):
                continue
            documents = captured_documents(record)
            for name, generator in generators.items():
                answer = generator.run(query=record["query"], documents=documents, analysis=record["analysis"])
                parts = answer.get("parts") or []
                out[name].append(
                    {
                        "set": set_name,
                        "half": half,
                        "id": record.get("id"),
                        "answers": list(record.get("answers") or []),
                        "parts": parts,
                        "candidates": "; ".join(part["short_answer"] for part in parts if part["short_answer"]),
                        "answer": answer["replies"][0],
                    }
                )
                if on_record is not None:
                    on_record(name, set_name, record, generator)
    return out


def short_answer_scores(records: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """EM and token F1 of every part's short answer (shown or not) against the gold answers."""
    return {
        "exact_match": metrics.mean(metrics.exact_match(r["candidates"], r["answers"]) for r in records),
        "token_f1": metrics.mean(metrics.token_f1(r["candidates"], r["answers"]) for r in records),
    }


def scores_by_half(
    records: Sequence[dict[str, Any]],
    measure: Callable[[list[dict[str, Any]]], dict[str, Any]],
    pooled: bool = False,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per set and half (and, with `pooled`, every set together under `POOLED`): the number of questions with a
    gold answer and `measure` of their records."""
    groups = {name: [r for r in records if r["set"] == name] for name in dict.fromkeys(r["set"] for r in records)}
    if pooled:
        groups[POOLED] = list(records)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for set_name, members in groups.items():
        out[set_name] = {}
        for half in HALVES:
            chosen = [r for r in members if r["half"] == half and r["answers"]]
            out[set_name][half] = {"questions": len(chosen), **measure(chosen)}
    return out


def fit_provenance(sets: Mapping[str, str | Path], records: Sequence[dict[str, Any]], command: str) -> dict[str, Any]:
    """What a fitted model file says of where it came from: per set its file name and questions per half (counted
    in the replayed `records`), the command that fitted it and the day."""
    fitted_from = [
        {
            "set": name,
            "file": Path(path).name,
            **{f"{half}_questions": sum(r["set"] == name and r["half"] == half for r in records) for half in HALVES},
        }
        for name, path in sets.items()
    ]
    return {"fitted_from": fitted_from, "command": command, "fitted_on": dt.date.today().isoformat()}
