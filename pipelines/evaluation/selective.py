"""What the analyst sees of a short answer shown only when it is sure: coverage, precision of the shown headlines,
the area under the risk-coverage curve and the calibration error of the confidence.

Each answer part is `(confidence, correct, shown)`: the confidence of its short answer (0 when it had none), whether
that short answer is right (token F1 >= 0.5 with a gold answer) and whether it was shown as a headline.

Usage:
```python
scores = selective_scores([(0.9, True, True), (0.3, False, False)])
scores["coverage"], scores["precision"], scores["aurc"], scores["ece"]
```
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipelines.evaluation import metrics
from pipelines.evaluation.charts import new_chart, save_chart

CORRECT_F1 = 0.5
ECE_BINS = 10


def part_rows(record: dict[str, Any]) -> list[tuple[float, bool, bool]]:
    """The (confidence, correct, shown) of each part of one evaluated question (`record["parts"]`, gold in
    `record["answers"]`)."""
    answers = record.get("answers") or []
    return [
        (
            float(part.get("short_answer_confidence") or 0.0),
            bool(part.get("short_answer")) and metrics.token_f1(part["short_answer"], answers) >= CORRECT_F1,
            bool(part.get("sure")) and bool(part.get("short_answer")),
        )
        for part in record.get("parts") or []
    ]


def risk_coverage(rows: Sequence[tuple[float, bool, bool]]) -> list[tuple[float, float]]:
    """(coverage, risk) when the parts are shown from the most to the least confident, one more at a time; parts
    without a short answer (confidence 0) are never shown."""
    ranked = sorted((row for row in rows if row[0] > 0), key=lambda row: -row[0])
    curve, wrong = [], 0
    for shown, (_, correct, _) in enumerate(ranked, start=1):
        wrong += not correct
        curve.append((shown / len(rows), wrong / shown))
    return curve


def expected_calibration_error(rows: Sequence[tuple[float, bool, bool]], bins: int = ECE_BINS) -> float | None:
    """ECE over the parts that had a short answer: the bins' (equal-width) |mean confidence - accuracy|, weighted
    by their share of the parts."""
    rated = [row for row in rows if row[0] > 0]
    if not rated:
        return None
    total = 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        members = [row for row in rated if low < row[0] <= high]
        if members:
            confidence = sum(row[0] for row in members) / len(members)
            accuracy = sum(row[1] for row in members) / len(members)
            total += len(members) / len(rated) * abs(confidence - accuracy)
    return total


def selective_scores(rows: Sequence[tuple[float, bool, bool]]) -> dict[str, Any]:
    """Coverage (share of parts with a headline), precision of the shown headlines, the area under the
    risk-coverage curve (mean risk over its points; lower is better) and ECE."""
    if not rows:
        return {"parts": 0, "coverage": None, "precision": None, "aurc": None, "ece": None}
    shown = [row for row in rows if row[2]]
    curve = risk_coverage(rows)
    return {
        "parts": len(rows),
        "coverage": len(shown) / len(rows),
        "precision": sum(row[1] for row in shown) / len(shown) if shown else None,
        "aurc": sum(risk for _, risk in curve) / len(curve) if curve else None,
        "ece": expected_calibration_error(rows),
    }


def curve_summary(rows: Sequence[tuple[float, bool, bool]], points: int = 100) -> dict[str, Any]:
    """The scores of `rows` with their risk-coverage curve cut to about `points` points (for reports and charts)."""
    curve = risk_coverage(rows)
    step = max(1, len(curve) // points)
    kept = curve[::step] + ([curve[-1]] if curve and (len(curve) - 1) % step else [])
    return {**selective_scores(rows), "curve": [[round(c, 4), round(r, 4)] for c, r in kept]}


def write_risk_coverage_chart(curves: dict[str, dict[str, Any]], path: Path) -> Path:
    """One risk-coverage line per name (a variant, a set or a half; each a `curve_summary`), with the operating point
    (the coverage and risk of the headlines actually shown) marked; written as a PNG."""
    figure, axes = new_chart(figsize=(6.4, 4.2))
    plotted = False
    for name, summary in curves.items():
        curve = summary.get("curve") or []
        if not curve:
            continue
        line = axes.plot([point[0] for point in curve], [point[1] for point in curve], label=name)[0]
        plotted = True
        if summary.get("precision") is not None:
            axes.plot([summary["coverage"]], [1 - summary["precision"]], "o", color=line.get_color())
    axes.set_xlabel("coverage (share of parts with a headline)")
    axes.set_ylabel("risk (share of shown headlines wrong)")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    if plotted:
        axes.legend(fontsize=8)
    axes.set_title("Risk-coverage of the short answer (dot: the threshold in use)")
    return save_chart(figure, path)
