"""`research fit spans`: fits the short answer's span chooser (`components.generation.span_choice`) on the tune half of
labelled question sets and measures it on the check half.

The sets are captures of the answer step (`research eval QUESTIONS.jsonl --capture FILE`). The answer step is replayed
on them with the span chooser off, logging for every part whose span the rules read from a sentence (or that asks
for one and got none): the sentence, the part, the question's terms and the rules' span. Each logged sentence gives
its candidate spans (`span_candidates`); a candidate is labelled right when its token F1 with a gold answer is the
best of its sentence's candidates and at least 0.5 (labelling every candidate that reaches 0.5 taught the model
to prefer longer spans that hold the answer: EM fell by 0.15). A logistic regression over the candidates of the
tune half is the model. It is scored by replacing each
logged part's span with the candidate the model rates highest and scoring every question's short answers (EM and
token F1, as `research fit answer` does), beside the rules' spans, per set and half. The lead the model's pick needs
over the rules' span to replace it (`switch_margin`, the generator's default "switch") is chosen among
`SWITCH_MARGINS` by the tune halves' token F1, and scored the same way ("switch"). With a ranking objective
(`--objective listwise`) a ranker is fitted beside the pointwise model and written into the same file: it orders a
part's candidates (the pick, the switch and the scores follow it), while the pointwise model still gives the
probability and lead the answer confidence reads, so that model needs no refit.

The log can be kept (`contexts`: a JSON file, with the names of the sets it was made from), so that a refit of the
same sets needs no replay.

Usage:
```python
report = fit_spans({"squad": Path("squad.capture.jsonl")}, out=Path("span_model.json"))
report["scores"]["squad"]["check"]["model"]["token_f1"]
```
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.generation.question_analysis import QuestionPart
from components.generation.span_choice import FEATURES, OBJECTIVES, fit, scored_candidates
from components.model_files import read_json_object
from pipelines.evaluation import metrics
from pipelines.evaluation.answer_replay import fit_provenance, replay_sets
from pipelines.evaluation.halves import HALVES, half_of
from pipelines.evaluation.jsonl import EvaluationInputError

# The leads over the rules' span tried for the model's pick to replace it (`switch_margin`).
SWITCH_MARGINS = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)
RIGHT_SPAN = 0.5  # a candidate is right when its token F1 with a gold answer is its sentence's best and reaches this
# What each kept record and logged context must hold (`fit_spans(contexts_file=...)`).
KEPT_RECORD_KEYS = ("set", "half", "id", "answers", "parts")
KEPT_CONTEXT_KEYS = ("sentence", "part", "question_terms", "rule_span", "rule_way", "set", "half", "id", "answers")
# The regularisation strengths (`c`) grouped cross-validation on the tune half chooses among (`cross_validated_c`),
# and its folds (a question's parts stay in one fold).
C_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
CV_FOLDS = 5


def _kept_sets(sets: Mapping[str, Path]) -> dict[str, str]:
    """What a kept log records of the sets it was made from: each set's name and its capture's file name."""
    return {name: Path(path).name for name, path in sets.items()}


def read_kept(path: Path, sets: Mapping[str, Path] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The records and contexts a kept log holds; `EvaluationInputError` (one sentence naming the file) when it is
    not JSON, lacks what a refit reads or (given the `sets` of this fit) was made from other sets."""
    kept = read_json_object(path, "kept span log", EvaluationInputError)
    made_from = kept.get("sets")
    if sets is not None and made_from is not None and made_from != _kept_sets(sets):
        named = ", ".join(f"{name}={file}" for name, file in made_from.items()) if isinstance(made_from, dict) else "?"
        raise EvaluationInputError(
            f"the kept span log at {path} was made from other sets ({named}); delete it to replay these"
        )
    lists = [kept.get("records"), kept.get("contexts")]
    for rows, keys in zip(lists, (KEPT_RECORD_KEYS, KEPT_CONTEXT_KEYS), strict=True):
        if not isinstance(rows, list) or not all(isinstance(row, dict) and all(k in row for k in keys) for row in rows):
            raise EvaluationInputError(
                f"the kept span log at {path} is not one `research fit spans --contexts` wrote; delete it to replay"
            )
    return lists[0], lists[1]


def collect_contexts(sets: Mapping[str, Path]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The replayed questions (the rules' spans) and, per logged part, what the span chooser reads."""
    generator = ExtractiveAnswerGenerator(confidence_threshold=0.0, span_choice="off")
    generator.span_log = []
    contexts: list[dict[str, Any]] = []

    def on_record(_: str, set_name: str, record: dict[str, Any], replayed: Any) -> None:
        for entry in replayed.span_log:
            contexts.append(
                {
                    **entry,
                    "set": set_name,
                    "half": half_of(set_name, record),
                    "id": record.get("id"),
                    "answers": list(record.get("answers") or []),
                }
            )
        replayed.span_log.clear()

    records = replay_sets(sets, {"rules": generator}, on_record)["rules"]
    return records, contexts


def _candidates_of(context: Mapping[str, Any]) -> tuple[list[Any], list[dict[str, float]], list[bool]]:
    """A logged part's candidates, their features and whether the question's form lets each answer."""
    part = dict(context["part"])
    part["labels"], part["terms"] = tuple(part.get("labels") or ()), tuple(part.get("terms") or ())
    return scored_candidates(
        context["sentence"],
        QuestionPart(**part),
        frozenset(context["question_terms"]),
        context["rule_span"],
        context["rule_way"],
    )


def labelled_candidates(contexts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per context with gold answers: its candidates' texts, features and right/wrong labels (right: the best
    token F1 of the sentence's candidates with a gold answer, when it reaches `RIGHT_SPAN`)."""
    out = []
    for context in contexts:
        if not context["answers"]:
            continue
        candidates, rows, eligible = _candidates_of(context)
        texts = [candidate.text for candidate in candidates]
        scores = [metrics.token_f1(text, context["answers"]) for text in texts]
        best = max(scores, default=0.0)
        # The best candidates only (not every one that overlaps the gold by half: those teach longer spans).
        labels = [best >= RIGHT_SPAN and score == best for score in scores]
        out.append({**context, "texts": texts, "rows": rows, "labels": labels, "eligible": eligible})
    return out


def _chosen(group: Mapping[str, Any], model: Any, margin: float | None = None) -> str:
    """The text of the eligible candidate (`span_choice.asked_form`) the model ranks highest (the shorter on a tie),
    or the rules' span without any; with a `margin`, the rules' span unless that candidate's rank score leads the
    rules' span's by it or the rules' span is not eligible ("switch", as `span_choice.switch_span`)."""
    if not group["texts"]:
        return group["rule_span"]
    scores = model.rank_scores(group["rows"])
    eligible = group.get("eligible") or [True] * len(scores)
    rated = list(zip(scores, group["texts"], group["rows"], eligible, strict=True))
    best = min(rated, key=lambda item: (not item[3], -item[0], len(item[1])))
    own = [(score, ok) for score, _, row, ok in rated if row.get("from_rule") == 1.0]
    if margin is None or not group["rule_span"] or not own or best[0] - own[0][0] >= margin:
        return best[1]
    return best[1] if best[3] and not own[0][1] else group["rule_span"]


def switch_margin(records: Sequence[dict[str, Any]], groups: Sequence[dict[str, Any]], model: Any) -> float:
    """The lead (of `SWITCH_MARGINS`) the model's pick needs over the rules' span to replace it that gives the tune
    halves' questions the best mean token F1 (the larger margin on a tie: fewer replaced spans)."""
    tune_records = [record for record in records if record["half"] == "tune"]
    tune = [group for group in groups if group["half"] == "tune"]

    def f1(margin: float) -> float:
        spans = {(group["id"], _asked(group["part"])): _chosen(group, model, margin) for group in tune}
        return _question_scores(tune_records, spans)["token_f1"] or 0.0

    return max(SWITCH_MARGINS, key=lambda margin: (round(f1(margin), 6), margin))


def _asked(part: Mapping[str, Any]) -> str:
    """A logged part (`QuestionPart` as a dict) as the answer's parts name it (their `question`): as the question words
    it, or its words in a log written before parts kept their wording."""
    return str(part.get("wording") or part["text"])


def _question_scores(records: Sequence[dict[str, Any]], spans: Mapping[tuple[Any, str], str]) -> dict[str, Any]:
    """EM and F1 of every question's short answers (shown or not), a part's span replaced where `spans` has one."""
    em, f1 = [], []
    for record in records:
        if not record["answers"]:
            continue
        shorts = [spans.get((record["id"], part["question"]), part["short_answer"]) for part in record["parts"]]
        joined = "; ".join(text for text in shorts if text)
        em.append(metrics.exact_match(joined, record["answers"]))
        f1.append(metrics.token_f1(joined, record["answers"]))
    return {"questions": len(em), "exact_match": metrics.mean(em), "token_f1": metrics.mean(f1)}


def _part_scores(groups: Sequence[dict[str, Any]], spans: Sequence[str]) -> dict[str, Any]:
    """Of the logged parts: how many, the share whose span is right, and the share with a right candidate at all."""
    right = [metrics.token_f1(span, group["answers"]) >= RIGHT_SPAN for span, group in zip(spans, groups, strict=True)]
    reachable = [any(group["labels"]) for group in groups]
    return {
        "parts": len(groups),
        "right": metrics.mean(right),
        "reachable": metrics.mean(reachable),
    }


def evaluate(
    records: Sequence[dict[str, Any]], groups: Sequence[dict[str, Any]], model: Any, margin: float | None = None
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per set and half: the rules' spans, the model's ("model") and, with a `margin`, the model's where it leads
    the rules' span by that margin ("switch"), scored over the logged parts and over every question."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for set_name in dict.fromkeys(record["set"] for record in records):
        out[set_name] = {}
        for half in HALVES:
            chosen_records = [r for r in records if r["set"] == set_name and r["half"] == half]
            chosen_groups = [g for g in groups if g["set"] == set_name and g["half"] == half]
            picked = [_chosen(group, model) for group in chosen_groups]
            spans = {
                (group["id"], _asked(group["part"])): span for group, span in zip(chosen_groups, picked, strict=True)
            }
            out[set_name][half] = {
                "rules": {
                    **_question_scores(chosen_records, {}),
                    **_part_scores(chosen_groups, [group["rule_span"] for group in chosen_groups]),
                },
                "model": {**_question_scores(chosen_records, spans), **_part_scores(chosen_groups, picked)},
            }
            if margin is not None:
                switched = [_chosen(group, model, margin) for group in chosen_groups]
                keyed = {(g["id"], _asked(g["part"])): span for g, span in zip(chosen_groups, switched, strict=True)}
                out[set_name][half]["switch"] = {
                    **_question_scores(chosen_records, keyed),
                    **_part_scores(chosen_groups, switched),
                }
    return out


def _fitted(groups: Sequence[dict[str, Any]], c: float, objective: str, meta: Mapping[str, Any] | None = None) -> Any:
    """The span model fitted on the groups' candidates (each group one part)."""
    rows = [row for group in groups for row in group["rows"]]
    labels = [label for group in groups for label in group["labels"]]
    parts = [number for number, group in enumerate(groups) for _ in group["rows"]]
    return fit(rows, labels, features=FEATURES, c=c, meta=meta, objective=objective, parts=parts)


def _right_share(groups: Sequence[dict[str, Any]], model: Any) -> float:
    """The share of the groups' parts whose candidate the model rates highest is right (token F1 >= `RIGHT_SPAN`)."""
    right = [metrics.token_f1(_chosen(group, model), group["answers"]) >= RIGHT_SPAN for group in groups]
    return metrics.mean(right) or 0.0


def cross_validated_c(
    groups: Sequence[dict[str, Any]], objective: str = "pointwise", grid: Sequence[float] = C_GRID
) -> tuple[float, dict[float, float]]:
    """The `c` of `grid` whose models, fitted on all but one of `CV_FOLDS` folds of the tune half's parts (a
    question's parts in one fold), pick a right span for the most held-out parts (the smaller `c` on a tie), and
    that share for each `c` (over the folds whose other parts can be fitted on)."""
    from sklearn.model_selection import GroupKFold

    tune = [group for group in groups if group["half"] == "tune"]
    questions = [str(group["id"]) for group in tune]
    folds = list(GroupKFold(n_splits=min(CV_FOLDS, len(set(questions)))).split(tune, groups=questions))
    shares = {}
    for c in grid:
        held = []
        for train, test in folds:
            try:
                model = _fitted([tune[i] for i in train], c, objective)
            except ValueError:  # a fold whose other parts lack right (or wrong) candidates scores nothing
                continue
            held.append(_right_share([tune[i] for i in test], model))
        shares[c] = sum(held) / len(held) if held else 0.0
    return max(grid, key=lambda c: (round(shares[c], 6), -c)), shares


def fit_spans(
    sets: Mapping[str, Path],
    out: Path,
    c: float | None = 1.0,
    command: str = "",
    contexts_file: Path | None = None,
    objective: str = "pointwise",
    probability_c: float = 1.0,
) -> dict[str, Any]:
    """Replay the captured sets (or read the kept log `contexts_file` when it exists), fit the span model on the
    tune halves, write it to `out` and return `{"model", "scores"}` (`evaluate`). The pointwise model gives each
    candidate's probability (with `c`; None: chosen by `cross_validated_c`); a ranking `objective`
    (`span_choice.OBJECTIVES`) adds a ranker with that `c` which orders the candidates and chooses the pick, the
    pointwise model then fitted with `probability_c`."""
    if objective not in OBJECTIVES:
        raise ValueError(f"the span model's objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
    if contexts_file is not None and contexts_file.is_file():
        records, contexts = read_kept(contexts_file, sets)
    else:
        records, contexts = collect_contexts(sets)
        if contexts_file is not None:
            slim = [{key: r[key] for key in KEPT_RECORD_KEYS} for r in records]
            contexts_file.parent.mkdir(parents=True, exist_ok=True)
            kept = {"sets": _kept_sets(sets), "records": slim, "contexts": contexts}
            contexts_file.write_text(json.dumps(kept) + "\n", encoding="utf-8")
    groups = labelled_candidates(contexts)
    tune = [group for group in groups if group["half"] == "tune"]
    labels = [label for group in tune for label in group["labels"]]
    if not labels:
        raise ValueError("the sets' tune halves hold no labelled candidate spans to fit on")
    chosen: dict[str, Any] = {}
    if c is None:
        c, shares = cross_validated_c(groups, objective)
        chosen = {"cross_validated": {str(grid_c): share for grid_c, share in shares.items()}}
    ranking = {"objective": objective, "c": c, **chosen}
    if objective != "pointwise":  # the ranker orders; the pointwise model (`probability_c`) gives the probability
        c, chosen = probability_c, {}
    meta = {
        **fit_provenance(sets, records, command),
        "tune_parts": len(tune),
        "tune_candidates": len(labels),
        "tune_right": sum(labels),  # candidates: a part may hold several right ones (its best F1, tied)
        "tune_right_parts": sum(any(group["labels"]) for group in tune),
        "right_span": RIGHT_SPAN,
        "c": c,
        **chosen,
    }
    model = _fitted(tune, c, "pointwise", meta)
    if objective != "pointwise":
        model = replace(model, rank=replace(_fitted(tune, ranking["c"], objective), meta=ranking))
    margin = switch_margin(records, groups, model)
    model = replace(model, meta={**model.meta, "switch_margin": margin})
    scores = evaluate(records, groups, model, margin)
    data = model.to_dict()
    data["scores"] = scores
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return {"model": data, "scores": scores}
