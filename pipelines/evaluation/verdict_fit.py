"""`research fit verdicts`: how often each kind of verdict was right, counted on labelled question sets and written
into the answer-confidence file, so that a verdict is as sure as its kind has proven.

A verdict (a *choice*: "Which was founded first, A or B?" answered by the option whose date wins; *both*: "Are A and
B both ...?" answered yes or no; any other *yes/no*: `answer_confidence.VERDICT_KINDS`) is no span the confidence
model was fitted on: the model's rows are almost all single-hop spans, and it gives a verdict about the confidence of
its weakest subject's sentence read as such a span. How often a kind of verdict is right is a simpler and better
measured thing: this fit replays the answer step on captured sets, counts each kind's verdicts and how many are right
(token F1 >= 0.5 with a gold answer, as every headline is scored) on the tune halves, and stores the posterior mean of
that rate under a uniform prior, `(right + 1) / (counted + 2)`: a kind seen a few times stays near one half, a kind
right every time of many approaches one. The check halves' counts
are written beside it. The generator reads the rate as the confidence of every verdict of that kind
(`AnswerConfidence.verdict_probability`); a kind no tune verdict was counted for keeps the model's confidence.

Usage:
```python
report = fit_verdicts({"hotpotqa_dev40": Path("hotpot.capture.jsonl")}, out=DEFAULT_MODEL_PATH, command="...")
report["kinds"]["choice"]["probability"]
```
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components.generation.answer_confidence import VERDICT_KINDS, AnswerConfidence, ConfidenceModelError
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator, asks_for_verdict
from components.model_files import read_json_object
from pipelines.evaluation import metrics
from pipelines.evaluation.answer_replay import replay_sets
from pipelines.evaluation.halves import HALVES
from pipelines.evaluation.selective import CORRECT_F1

PRIOR = "uniform: (right + 1) / (counted + 2)"


def verdict_outcomes(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every verdict among replayed `records` (`answer_replay.replay_sets`) with a gold answer: its set, half, kind,
    short answer and whether it is right."""
    outcomes = []
    for record in records:
        answers = record.get("answers") or []
        for part in record.get("parts") or []:
            kind, short = part.get("verdict") or "", part.get("short_answer") or ""
            if kind in VERDICT_KINDS and short and answers:
                right = metrics.token_f1(short, answers) >= CORRECT_F1
                outcomes.append(
                    {"set": record["set"], "half": record["half"], "id": record.get("id"), "kind": kind,
                     "short_answer": short, "right": right}
                )  # fmt: skip
    return outcomes


def counted(outcomes: list[dict[str, Any]], half: str) -> dict[str, dict[str, Any]]:
    """Per kind of verdict: how many of `half`'s verdicts were counted and right, and (for the tune half, which the
    rate is fitted on) the rate's posterior mean under a uniform prior."""
    table: dict[str, dict[str, Any]] = {}
    for kind in VERDICT_KINDS:
        rows = [row for row in outcomes if row["kind"] == kind and row["half"] == half]
        if not rows:
            continue
        right = sum(row["right"] for row in rows)
        table[kind] = {"counted": len(rows), "right": right}
        if half == "tune":
            table[kind]["probability"] = round((right + 1) / (len(rows) + 2), 4)
    return table


def fit_verdicts(
    sets: Mapping[str, Path],
    out: Path,
    command: str,
    model: str | Path | None = None,
) -> dict[str, Any]:
    """Counts each kind of verdict on `sets`' captures (set name -> capture file, halves by `halves.half_of`) and
    writes the tune halves' rates into the confidence file `model` (the packaged one when None) as `out`, its
    logistic model unchanged and the rates it held replaced (the replay rates verdicts without them). Returns
    `{"kinds": tune counts and rates, "check": check counts, "outcomes": every verdict}`; a ValueError when the tune
    halves hold no verdict (nothing to measure: the file is not written)."""
    source = Path(model) if model else AnswerConfidence.DEFAULT_PATH
    AnswerConfidence.load(source)  # refuses a file this code cannot use, before the long replay
    # The file as it was, its keys in their order; the verdicts' counts are set below.
    data = read_json_object(source, AnswerConfidence.WHAT, ConfidenceModelError)

    def asks_verdict(record: dict[str, Any]) -> bool:
        return asks_for_verdict(record["query"], record.get("analysis"))

    with tempfile.TemporaryDirectory() as folder:
        # The replay rates verdicts by the logistic model alone: what it counts must not depend on the rates the
        # file already holds (a verdict shown or not could change what else the answer reads).
        unmeasured = Path(folder) / "confidence.json"
        unmeasured.write_text(json.dumps({key: value for key, value in data.items() if key != "verdicts"}))
        reader = ExtractiveAnswerGenerator(confidence_model=str(unmeasured))
        # Only the questions that ask for a verdict are answered again: the rest hold none to count.
        records = replay_sets(sets, {"replay": reader}, select=asks_verdict)["replay"]
    outcomes = verdict_outcomes(records)
    kinds = counted(outcomes, HALVES[0])
    if not kinds:
        raise ValueError("the tune halves of these sets hold no verdict to count: nothing was written")
    verdicts = {
        "kinds": kinds,
        "check": counted(outcomes, HALVES[1]),
        "prior": PRIOR,
        "right_when": f"token F1 >= {CORRECT_F1} with a gold answer",
        "fitted_from": {name: Path(path).name for name, path in sets.items()},
        "command": command,
        "fitted_on": dt.date.today().isoformat(),
    }
    data = {**data, "verdicts": verdicts}
    AnswerConfidence.from_dict(data)  # what is written can be read back
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return {"kinds": kinds, "check": verdicts["check"], "outcomes": outcomes}
