"""`research fit answer`: fits the answer confidence (`components.generation.answer_confidence`) on the tune half of
labelled question sets, chooses its threshold on the check half, and writes the versioned model file.

The sets are captures of the answer step (`research eval QUESTIONS.jsonl --capture FILE`): each question's ranked
chunks, analysis and gold answers. The answer step is replayed on them; every part with a short answer is a row,
labelled right when its token F1 with a gold answer is at least 0.5. A question of several parts has one set of gold
answers for all of them, so each gold answer makes at most one part right: the part whose short answer matches it
best (`part_labels`); without that every part that repeats one gold answer would teach the `parts` feature that it is
right.

Halves (the same for every set of a kind): a set named `squad*` splits by article (ids `squad-AA-...`: articles 0-11
tune, the rest check); `hotpotqa*` and `musique*` by position in their question file (0-19 tune, the rest check);
any other set by a fixed-seed half of its question ids.

Usage:
```python
sets = {"squad": Path("squad.capture.jsonl"), "demo": Path("demo.capture.jsonl")}
report = fit_answer_confidence(sets, out=Path("answer_confidence.json"))
report["sets"]["squad"]["check"]["precision"]
```
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from components.generation.answer_confidence import FEATURES, FOUND_FEATURES, fit
from components.generation.answer_evidence import EVIDENCE_GROUPS
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from pipelines.evaluation import metrics
from pipelines.evaluation.answer_replay import fit_provenance, replay_sets, scores_by_half, short_answer_scores
from pipelines.evaluation.halves import HALVES
from pipelines.evaluation.selective import part_rows, selective_scores

TARGET_PRECISION = 0.9
MIN_SHOWN = 20  # the threshold is chosen where at least this many check-half headlines are shown


def part_labels(short_answers: Sequence[str], answers: Sequence[str]) -> list[bool]:
    """Right / wrong of each short answer of one question's parts against the question's gold answers. One part: right
    when its token F1 with a gold answer is at least 0.5. Several parts: each gold answer makes at most one part right,
    the part whose short answer has the best token F1 with it (the earlier part on a tie), when that F1 is at least
    0.5; the other parts are wrong for the fit (the evaluation's scores still count any match: `selective`)."""
    if len(short_answers) < 2:
        return [metrics.token_f1(short, answers) >= 0.5 for short in short_answers]
    right = [False] * len(short_answers)
    for answer in answers:
        f1s = [metrics.token_f1(short, [answer]) for short in short_answers]
        best = max(range(len(f1s)), key=lambda index: (f1s[index], -index))
        right[best] = right[best] or f1s[best] >= 0.5
    return right


def labelled_rows(records: Sequence[dict[str, Any]]) -> tuple[list[dict[str, float]], list[bool]]:
    """The features and right/wrong label (`part_labels`) of every part with a short answer."""
    rows, labels = [], []
    for record in records:
        if not record["answers"]:
            continue
        parts = [part for part in record["parts"] if part["short_answer"]]
        for part, right in zip(parts, part_labels([p["short_answer"] for p in parts], record["answers"]), strict=True):
            if part.get("features"):
                rows.append(part["features"])
                labels.append(right)
    return rows, labels


def choose_threshold(scored: Sequence[tuple[float, bool]], target: float = TARGET_PRECISION) -> float:
    """The lowest confidence at which the short answers at or above it are right at least `target` of the time
    (with at least `MIN_SHOWN` of them); the highest confidence seen when none reaches it."""
    ranked = sorted(scored, key=lambda row: -row[0])
    if not ranked:
        return 1.0
    best, right = ranked[0][0], 0
    for shown, (confidence, correct) in enumerate(ranked, start=1):
        right += correct
        following = ranked[shown][0] if shown < len(ranked) else -1.0
        if following == confidence:
            continue  # a threshold shows all the parts of one confidence or none
        if shown >= MIN_SHOWN and right / shown >= target:
            best = confidence
    return best


def shown_precision(scored: Sequence[tuple[float, bool]], threshold: float, level: float = 0.95) -> dict[str, Any]:
    """How many of `scored`'s short answers a `threshold` shows, how many of those are right, their share and its
    Wilson interval at `level` (scipy's `binomtest`): a threshold chosen on a few hundred parts can look 0.9 precise
    and be 0.86 on more data, and the interval says how far to trust it. Share and interval are None when nothing
    is shown."""
    from scipy.stats import binomtest

    shown = [correct for confidence, correct in scored if confidence >= threshold]
    right = sum(bool(correct) for correct in shown)
    if not shown:
        return {"shown": 0, "right": 0, "precision": None, "interval": None, "level": level}
    interval = binomtest(right, len(shown)).proportion_ci(confidence_level=level, method="wilson")
    return {
        "shown": len(shown),
        "right": right,
        "precision": right / len(shown),
        "interval": [float(interval.low), float(interval.high)],
        "level": level,
    }


def _answer_scores(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The selective scores of the records' parts, then EM / F1 of every part's short answer (shown or not)."""
    rows = [row for record in records for row in part_rows(record)]
    return {**selective_scores(rows), **short_answer_scores(records)}


def _auc(scored: Sequence[tuple[float, bool]]) -> float | None:
    """The area under the ROC curve of confidences against right/wrong (None without both labels)."""
    from sklearn.metrics import roc_auc_score

    labels = [bool(label) for _, label in scored]
    if len(set(labels)) < 2:
        return None
    return float(roc_auc_score(labels, [confidence for confidence, _ in scored]))


def feature_ablation(
    records: Sequence[dict[str, Any]], target: float = TARGET_PRECISION, c: float = 1.0, binary_unscaled: bool = False
) -> list[dict[str, Any]]:
    """What each evidence feature group adds: the model refitted on the tune half with every feature, without each
    group, and with none of them (`found only`). Per variant and set: tune and check AUC, and the check half's
    coverage at the threshold chosen on it for `target` precision of shown headlines. `c`, `binary_unscaled`: as
    the fit's (`fit_answer_confidence`)."""
    variants = {"all": FEATURES, "found only": FOUND_FEATURES}
    variants |= {
        f"without {group}": tuple(f for f in FEATURES if f not in kept) for group, kept in EVIDENCE_GROUPS.items()
    }
    rows, labels = labelled_rows([record for record in records if record["half"] == "tune"])
    out = []
    for variant, features in variants.items():
        model = fit(rows, labels, threshold=0.5, features=features, c=c, binary_unscaled=binary_unscaled)
        line: dict[str, Any] = {"variant": variant}
        for set_name in dict.fromkeys(record["set"] for record in records):
            for half in HALVES:
                set_rows, set_labels = labelled_rows([r for r in records if r["set"] == set_name and r["half"] == half])
                scored = [(model.probability(row), label) for row, label in zip(set_rows, set_labels, strict=True)]
                line[f"{set_name} {half} AUC"] = _auc(scored)
                if half == "check":
                    chosen = choose_threshold(scored, target)
                    shown = [label for confidence, label in scored if confidence >= chosen]
                    line[f"{set_name} check coverage"] = len(shown) / len(scored) if scored else None
        out.append(line)
    return out


def fit_answer_confidence(
    sets: Mapping[str, Path],
    out: Path,
    threshold: float | None = None,
    target: float = TARGET_PRECISION,
    c: float = 1.0,
    command: str = "",
    ablation: bool = False,
    binary_unscaled: bool = False,
) -> dict[str, Any]:
    """Replay the captured sets, fit on the tune half, choose the threshold on the check half (unless given), write
    the model file to `out` and return `{"model", "sets": per set and half scores at that threshold, "records",
    "ablation": per feature group (`feature_ablation`, when asked)}`. `c`: the penalty's inverse strength;
    `binary_unscaled`: a yes/no feature centred and not divided by its spread, the measured ones divided by twice theirs
    (`logistic_model.fit_standardised`; measured and not the default: docs/answer-confidence.md, "the confidence's
    refit regressions traced")."""
    records = replay_sets(sets, {"fit": ExtractiveAnswerGenerator(confidence_threshold=0.0)})["fit"]

    tune = [record for record in records if record["half"] == "tune"]
    rows, labels = labelled_rows(tune)
    if not rows:
        raise ValueError("the sets' tune halves hold no labelled short answers to fit on")
    ablated = feature_ablation(records, target, c, binary_unscaled) if ablation else []
    meta = {
        **fit_provenance(sets, records, command),
        "tune_parts": len(rows),
        "tune_right": sum(labels),
        "target_precision": target,
        "c": c,
        "binary_unscaled": binary_unscaled,
    }
    model = fit(rows, labels, threshold=0.5, features=FEATURES, c=c, meta=meta, binary_unscaled=binary_unscaled)
    for record in records:
        for part in record["parts"]:
            if part["short_answer"] and part.get("features"):
                part["short_answer_confidence"] = model.probability(part["features"])
            else:
                part["short_answer_confidence"] = 0.0
    check_rows, check_labels = labelled_rows([record for record in records if record["half"] == "check"])
    check_scored = [(model.probability(row), label) for row, label in zip(check_rows, check_labels, strict=True)]
    if threshold is None:
        threshold = choose_threshold(check_scored, target)
    for record in records:
        for part in record["parts"]:
            part["sure"] = bool(part["short_answer"]) and part["short_answer_confidence"] >= threshold
    model = dataclasses.replace(model, threshold=threshold)
    scores = scores_by_half(records, _answer_scores)
    data = model.to_dict()
    data["scores"] = scores
    data["check_headlines"] = shown_precision(check_scored, threshold)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return {"model": data, "sets": scores, "records": records, "ablation": ablated}
