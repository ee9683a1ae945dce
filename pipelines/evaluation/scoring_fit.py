"""`research fit scoring`: fits the offline answer's sentence and span weights (`components.generation.answer_scoring`)
on the tune halves of labelled question sets, and measures what each rule family adds.

The sets are captures of the answer step (`research eval QUESTIONS.jsonl --capture FILE`). The answer step is replayed
on them with the generator logging every part's candidates and their features: its best sentences (labelled right when
one holds a gold answer), the entities of a sentence read for a span and the noun phrases read for a "what" (labelled
right when their token F1 with a gold answer is at least 0.5). Each group of candidates gives pairs of a right and a
wrong one; a logistic regression without intercept on the pairs' feature differences (a pairwise ranking) gives the
weights, scaled so that the first feature (a sentence's `share`, a span's `distance`) keeps its weight. A fitted group
of weights is kept only when the replayed check halves do not lose by it (EM, F1 and "the whole answer contains a
gold answer", on every set's check half and on them pooled); the others keep the weights they had.

Usage:
```python
sets = {"squad": Path("squad.capture.jsonl")}
report = fit_scoring(sets, out=Path("answer_scoring.json"))
report["before"]["squad"]["check"]["token_f1"], report["after"]["squad"]["check"]["token_f1"]
```
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from components.generation.answer_confidence import AnswerConfidence
from components.generation.answer_scoring import GROUPS, AnswerScoring
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from pipelines.evaluation import metrics, selective
from pipelines.evaluation.answer_replay import replay_sets, scores_by_half, short_answer_scores
from pipelines.evaluation.halves import HALVES, half_of

MEASURES = ("exact_match", "token_f1", "contains")
# What the analyst sees first, counted beside them: the headlines the packaged confidence would show, and those right.
HEADLINES = ("headlines", "right_headlines")
RIGHT_SPAN = 0.5  # a span is right when its token F1 with a gold answer reaches this
# The feature whose weight a fitted group keeps (the others are scaled to it): the ranking fixes only ratios.
PINNED = {"sentence": "share", "entity_span": "distance", "phrase_span": "distance"}


def _answer_scores(records: list[dict[str, Any]], threshold: float | None = None) -> dict[str, float | None]:
    """EM and F1 of every part's short answer (shown or not), and the share of whole answers that contain a gold
    answer; with `threshold`, also the headlines shown at it (parts the answer step would show, at that confidence
    or above) and how many of them are right. The replays run at threshold 0, so every measure above reads every
    part's short answer; the headlines are counted afterwards."""
    scores: dict[str, float | None] = {
        **short_answer_scores(records),
        "contains": metrics.mean(metrics.answer_contains_gold(r["answer"], r["answers"]) for r in records),
    }
    if threshold is not None:
        rows = [
            (confidence, correct)
            for r in records
            for confidence, correct, shown in selective.part_rows(r)
            if shown and confidence >= threshold
        ]
        # A half left out of the replay has no headlines to count, as it has no EM.
        counted = bool(records)
        scores.update(
            headlines=len(rows) if counted else None,
            right_headlines=sum(correct for _, correct in rows) if counted else None,
        )
    return scores


def does_not_lose(before: Mapping[str, Any], after: Mapping[str, Any], half: str = "check") -> bool:
    """Whether `after` is at least as good as `before` on every measure, on the `half` of every set and of the sets
    pooled: a gain on the large set may not hide a loss on a small one of another kind."""
    return all(
        (after[name][half][key] or 0.0) >= (before[name][half][key] or 0.0) - 1e-9
        for name in before
        for key in MEASURES
    )


def labelled_groups(log: Sequence[dict[str, Any]], answers: Sequence[str]) -> dict[str, list[list[tuple]]]:
    """The logged candidate groups of one question by kind, each candidate `(features, right)`."""
    groups: dict[str, list[list[tuple]]] = {"sentence": [], "entity_span": [], "phrase_span": []}
    for entry in log:
        if entry["kind"] == "sentence":
            labelled = [
                (features, bool(metrics.answer_contains_gold(text, answers))) for features, text in entry["candidates"]
            ]
        else:
            labelled = [
                (features, metrics.token_f1(text, answers) >= RIGHT_SPAN) for features, text in entry["candidates"]
            ]
        groups[entry["kind"]].append(labelled)
    return groups


def fit_ranking(
    groups: Sequence[Sequence[tuple[Mapping[str, float], bool]]],
    features: Sequence[str],
    pinned: str,
    pinned_weight: float,
    higher_is_better: bool,
    c: float = 1.0,
) -> dict[str, float] | None:
    """Weights for `features` from groups of labelled candidates: a logistic regression without intercept on the
    differences of every (right, wrong) pair of a group, scaled so that `pinned` weighs `pinned_weight`. For costs
    (`higher_is_better` False) the signs are turned. None when no group holds both labels or `pinned` gets no
    weight of the right sign."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    rows = []
    for group in groups:
        right = [features_ for features_, label in group if label]
        wrong = [features_ for features_, label in group if not label]
        for good in right:
            for bad in wrong:
                rows.append([float(good.get(name, 0.0)) - float(bad.get(name, 0.0)) for name in features])
    if not rows:
        return None
    matrix = np.array(rows)
    # Each pair both ways round, so the two classes are balanced and no intercept is needed.
    x = np.vstack([matrix, -matrix])
    y = np.array([1] * len(rows) + [0] * len(rows))
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=2000).fit(x, y)
    coef = model.coef_[0] if higher_is_better else -model.coef_[0]
    anchor = coef[list(features).index(pinned)]
    if anchor * pinned_weight <= 0:
        return None
    return {name: round(float(value * pinned_weight / anchor), 4) for name, value in zip(features, coef, strict=True)}


def fit_scoring(
    sets: Mapping[str, Path],
    out: Path,
    start: str = "",
    c: float = 1.0,
    command: str = "",
    progress: Callable[[str], None] = lambda message: None,
) -> dict[str, Any]:
    """Fit the sentence and span weights on the tune halves, keep each fitted group only when the check halves do not
    lose by it (tried in turn, each on top of those kept before it), write the scoring file to `out` and return
    `{"scoring", "before", "after", "kept", "fitted", "trials"}` (`trials`: per group, the scores with it)."""
    current = AnswerScoring.load(start or None)
    logging_generator = ExtractiveAnswerGenerator(scoring_model=start, confidence_threshold=0.0)
    logging_generator.scoring.log = []
    collected: dict[str, list] = {group: [] for group in GROUPS}

    def collect(_: str, set_name: str, record: dict[str, Any], generator: Any) -> None:
        log, generator.scoring.log = generator.scoring.log, []
        if half_of(set_name, record) != "tune" or not record.get("answers"):
            return
        for group, labelled in labelled_groups(log, record["answers"]).items():
            collected[group].extend(labelled)

    progress("replaying the captures with the weights they start from, logging the candidates")
    before_records = replay_sets(sets, {"before": logging_generator}, collect)["before"]
    before = scores_by_half(before_records, _answer_scores, pooled=True)
    fitted: dict[str, dict[str, float] | None] = {}
    for group, features in GROUPS.items():
        pinned = PINNED[group]
        fitted[group] = fit_ranking(
            collected[group], features, pinned, float(getattr(current, group).get(pinned, 1.0)), group == "sentence", c
        )
    kept: list[str] = []
    trials: dict[str, Any] = {}  # per fitted group: the scores with it, kept or not
    scores = before
    for group, weights in fitted.items():
        if weights is None:
            continue
        trial = current.with_weights(group, weights)
        progress(f"replaying with the fitted {group} weights")
        with tempfile.TemporaryDirectory(prefix="answer-scoring-") as folder:
            path = Path(folder) / "answer_scoring.json"
            path.write_text(json.dumps(trial.to_dict()), encoding="utf-8")
            generator = ExtractiveAnswerGenerator(scoring_model=str(path), confidence_threshold=0.0)
            records = replay_sets(sets, {"trial": generator})["trial"]
        trial_scores = trials[group] = scores_by_half(records, _answer_scores, pooled=True)
        if does_not_lose(scores, trial_scores):
            current, scores = trial, trial_scores
            kept.append(group)
    meta = {
        "fitted_from": [
            {
                "set": name,
                "file": Path(path).name,
                **{f"{half}_questions": before[name][half]["questions"] for half in HALVES},
            }
            for name, path in sets.items()
        ],
        "command": command,
        "fitted_on": dt.date.today().isoformat(),
        "tune_groups": {group: len(groups) for group, groups in collected.items()},
        "fitted": fitted,
        "kept": kept,
        "trials": trials,
        "scores_before": before,
        "scores": scores,
    }
    data = {**current.to_dict(), **meta}
    data.pop("note", None)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return {"scoring": data, "before": before, "after": scores, "kept": kept, "fitted": fitted, "trials": trials}


def ablate(
    sets: Mapping[str, Path],
    families: Sequence[str],
    scoring_model: str = "",
    progress: Callable[[str], None] = lambda message: None,
    halves: Sequence[str] = HALVES,
) -> dict[str, dict[str, Any]]:
    """Per rule family (and `all rules` first): the scores with every rule, and with that family switched off, on the
    questions of `halves` (a half left out scores None), with the headlines the packaged confidence would show (a
    family may change which short answers are sure rather than which are right)."""
    generators = {
        "all rules": ExtractiveAnswerGenerator(scoring_model=scoring_model, confidence_threshold=0.0),
        **{
            family: ExtractiveAnswerGenerator(scoring_model=scoring_model, confidence_threshold=0.0, rules_off=[family])
            for family in families
        },
    }
    threshold = AnswerConfidence.load(None).threshold
    progress(f"replaying with {len(generators)} variants")
    variants = replay_sets(sets, generators, halves=halves)
    return {
        name: scores_by_half(records, lambda chosen: _answer_scores(chosen, threshold), pooled=True)
        for name, records in variants.items()
    }
