"""`research fit answer SET=CAPTURE.jsonl ...`: fits the answer confidence on labelled question sets and writes it;
`research fit scoring SET=CAPTURE.jsonl ...`: fits the answer's sentence and span weights, or (`--ablate`) measures
what each rule family adds."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from pipelines.cli import UserError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("fit", help="fit the offline answer's models on labelled question sets")
    commands = parser.add_subparsers(dest="fit_command", metavar="MODEL", required=True)
    answer = commands.add_parser(
        "answer",
        help="fit the short answer's confidence (tune half) and its threshold (check half)",
        description="Replays the answer step on captured question sets (`research eval QUESTIONS.jsonl --capture "
        "FILE`), fits the confidence of each part's short answer on the sets' tune halves, chooses the threshold "
        "for about the target precision of shown headlines on their check halves, and writes the model file.",
    )
    answer.add_argument(
        "sets",
        nargs="+",
        metavar="SET=CAPTURE.jsonl",
        help="a set's name (squad..., hotpotqa..., musique..., any) "
        "and its capture; the name decides how it is split into halves",
    )
    answer.add_argument("--out", type=Path, default=None, help="model file (default: the packaged one)")
    answer.add_argument("--threshold", type=float, default=None, help="use this threshold instead of choosing one")
    answer.add_argument("--target", type=float, default=0.9, help="check-half headline precision (default 0.9)")
    answer.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength (default 1.0)")
    answer.add_argument(
        "--ablation", action="store_true", help="also print what each evidence feature group adds (tune/check AUC)"
    )
    answer.add_argument("--chart", type=Path, default=None, help="also write a risk-coverage chart (PNG) here")
    answer.set_defaults(func=fit_answer)
    scoring = commands.add_parser(
        "scoring",
        help="fit the answer's sentence and span weights (tune half), kept where the check half does not lose",
        description="Replays the answer step on captured question sets, fits the weights the offline answer chooses "
        "its sentence and short answer with on the sets' tune halves (a pairwise ranking of each part's candidates), "
        "keeps each fitted group of weights only when the check halves do not lose by it, and writes the scoring "
        "file. With --ablate, replays the sets with each rule family switched off instead and prints what each adds.",
    )
    scoring.add_argument("sets", nargs="+", metavar="SET=CAPTURE.jsonl", help="as for `research fit answer`")
    scoring.add_argument("--out", type=Path, default=None, help="scoring file (default: the packaged one)")
    scoring.add_argument("--start", default="", help="the scoring file to start from (default: the packaged one)")
    scoring.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength (default 1.0)")
    scoring.add_argument(
        "--ablate",
        nargs="*",
        metavar="FAMILY",
        default=None,
        help="measure what rule families add (all of them when none is named) instead of fitting",
    )
    scoring.add_argument(
        "--halves",
        choices=("tune", "check", "both"),
        default="both",
        help="with --ablate: replay only this half of each set (default both)",
    )
    scoring.add_argument("--json", type=Path, default=None, help="also write the numbers as JSON here")
    scoring.set_defaults(func=fit_scoring)
    spans = commands.add_parser(
        "spans",
        help="fit the short answer's span chooser (tune half) and score it beside the rules' spans (check half)",
        description="Replays the answer step on captured question sets with the span chooser off, reads every "
        "candidate span of each part's sentence, fits the model that chooses among them on the sets' tune halves, "
        "scores its choices beside the rules' spans on both halves, and writes the span model file. Refit the "
        "confidence afterwards (`research fit answer`): it reads the span model's probability and margin.",
    )
    spans.add_argument("sets", nargs="+", metavar="SET=CAPTURE.jsonl", help="as for `research fit answer`")
    spans.add_argument("--out", type=Path, default=None, help="span model file (default: the packaged one)")
    spans.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength (default 1.0)")
    spans.add_argument(
        "--contexts",
        type=Path,
        default=None,
        help="keep what the replay logged in this file, and read it instead of replaying when it exists",
    )
    spans.set_defaults(func=fit_spans)


def _sets(values: list[str]) -> dict[str, Path]:
    sets: dict[str, Path] = {}
    for value in values:
        name, _, path = value.partition("=")
        if not name or not path:
            raise UserError(f"{value!r} is not SET=CAPTURE.jsonl")
        if name in sets:
            raise UserError(f"the set {name!r} is named twice")
        if not Path(path).is_file():
            raise UserError(f"{path} does not exist or is not a file")
        sets[name] = Path(path)
    return sets


def fit_answer(args: argparse.Namespace) -> int:
    from components.generation.answer_confidence import DEFAULT_MODEL_PATH
    from pipelines.evaluation.confidence_fit import HALVES, fit_answer_confidence
    from pipelines.evaluation.questions import EvaluationInputError
    from pipelines.evaluation.selective import curve_summary, part_rows, write_risk_coverage_chart

    sets = _sets(args.sets)
    if args.threshold is not None and not 0 <= args.threshold <= 1:
        raise UserError("--threshold must be between 0 and 1")
    if not 0 < args.target <= 1:
        raise UserError("--target must be above 0 and at most 1")
    command = "research fit answer " + " ".join(shlex.quote(f"{name}={path.name}") for name, path in sets.items())
    out = args.out or DEFAULT_MODEL_PATH
    try:
        report = fit_answer_confidence(
            sets,
            out=out,
            threshold=args.threshold,
            target=args.target,
            c=args.c,
            command=command,
            ablation=args.ablation,
        )
    except (EvaluationInputError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    model = report["model"]
    print(
        f"Fitted on {model['tune_parts']} tune-half short answers ({model['tune_right']} right); threshold "
        f"{model['threshold']:.3f}; written to {out}"
    )
    print("| set | half | questions | parts | coverage | precision | AURC | ECE | EM | F1 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, halves in report["sets"].items():
        for half in HALVES:
            row = halves[half]
            cells = [row[key] for key in ("coverage", "precision", "aurc", "ece", "exact_match", "token_f1")]
            shown = " | ".join("–" if value is None else f"{value:.3f}" for value in cells)
            print(f"| {name} | {half} | {row['questions']} | {row['parts']} | {shown} |")
    if report["ablation"]:
        columns = [key for key in report["ablation"][0] if key != "variant"]
        print("| features | " + " | ".join(columns) + " |")
        print("|---" * (len(columns) + 1) + "|")
        for line in report["ablation"]:
            cells = ["–" if line[key] is None else f"{line[key]:.3f}" for key in columns]
            print(f"| {line['variant']} | " + " | ".join(cells) + " |")
    if args.chart is not None:
        curves = {
            f"{name} {half}": curve_summary(
                [row for r in report["records"] if r["set"] == name and r["half"] == half for row in part_rows(r)]
            )
            for name in report["sets"]
            for half in HALVES
        }
        print(f"Chart: {write_risk_coverage_chart(curves, args.chart)}")
    return 0


def _cells(row: dict[str, Any]) -> str:
    from pipelines.evaluation.scoring_fit import MEASURES

    return " / ".join("–" if row[key] is None else f"{row[key]:.3f}" for key in MEASURES)


def fit_scoring(args: argparse.Namespace) -> int:
    import json
    import sys

    from components.generation.answer_scoring import DEFAULT_SCORING_PATH, RULE_FAMILIES, ScoringModelError
    from pipelines.evaluation.halves import HALVES
    from pipelines.evaluation.questions import EvaluationInputError
    from pipelines.evaluation.scoring_fit import ablate, fit_scoring

    sets = _sets(args.sets)
    if args.start and not Path(args.start).is_file():
        raise UserError(f"{args.start} does not exist or is not a file")

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        if args.ablate is not None:
            families = args.ablate or list(RULE_FAMILIES)
            unknown = sorted(set(families) - set(RULE_FAMILIES))
            if unknown:
                raise UserError(f"unknown rule families: {', '.join(unknown)} (known: {', '.join(RULE_FAMILIES)})")
            halves = HALVES if args.halves == "both" else (args.halves,)
            table = ablate(sets, families, scoring_model=args.start, progress=progress, halves=halves)
            print("| rules | set | tune EM / F1 / contains | check EM / F1 / contains |")
            print("|---|---|---|---|")
            for name, scores in table.items():
                label = name if name == "all rules" else f"without {name}"
                for set_name, halves in scores.items():
                    print(f"| {label} | {set_name} | {_cells(halves['tune'])} | {_cells(halves['check'])} |")
            report: dict[str, Any] = {"ablation": table}
        else:
            command = "research fit scoring " + " ".join(
                shlex.quote(f"{name}={path.name}") for name, path in sets.items()
            )
            out = args.out or DEFAULT_SCORING_PATH
            report = fit_scoring(sets, out=out, start=args.start, c=args.c, command=command, progress=progress)
            kept = ", ".join(report["kept"]) or "none"
            print(f"Fitted groups kept (the check halves did not lose by them): {kept}; written to {out}")
            print("| fitted group | kept | pooled tune EM / F1 / contains | pooled check EM / F1 / contains |")
            print("|---|---|---|---|")
            for group, trial in report["trials"].items():
                kept_it = "yes" if group in report["kept"] else "no"
                print(f"| {group} | {kept_it} | {_cells(trial['all']['tune'])} | {_cells(trial['all']['check'])} |")
            print("| set | half | questions | before EM / F1 / contains | after EM / F1 / contains |")
            print("|---|---|---|---|---|")
            for set_name, halves in report["before"].items():
                for half in HALVES:
                    before, after = halves[half], report["after"][set_name][half]
                    print(f"| {set_name} | {half} | {before['questions']} | {_cells(before)} | {_cells(after)} |")
    except (EvaluationInputError, ScoringModelError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    if args.json is not None:
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {args.json}: {exc.strerror or exc}") from exc
    return 0


def fit_spans(args: argparse.Namespace) -> int:
    from components.generation.span_choice import DEFAULT_MODEL_PATH, SpanModelError
    from pipelines.evaluation.halves import HALVES
    from pipelines.evaluation.questions import EvaluationInputError
    from pipelines.evaluation.span_fit import fit_spans

    sets = _sets(args.sets)
    if args.c <= 0:
        raise UserError("--c must be above 0")
    command = "research fit spans " + " ".join(shlex.quote(f"{name}={path.name}") for name, path in sets.items())
    out = args.out or DEFAULT_MODEL_PATH
    try:
        report = fit_spans(sets, out=out, c=args.c, command=command, contexts_file=args.contexts)
    except (EvaluationInputError, SpanModelError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    model = report["model"]
    print(
        f"Fitted on {model['tune_candidates']} candidate spans of {model['tune_parts']} tune-half parts "
        f"({model['tune_right']} right); the pick replaces the rules' span when it leads by "
        f"{model.get('switch_margin', 0.0)}; written to {out}"
    )
    print(
        "| set | half | questions | parts | rules EM / F1 / parts right | model EM / F1 / parts right "
        "| switch EM / F1 / parts right | reachable |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, halves in report["scores"].items():
        for half in HALVES:
            rules, fitted = halves[half]["rules"], halves[half]["model"]
            switched = halves[half].get("switch", fitted)
            keys = ("exact_match", "token_f1", "right")
            cells = [
                " / ".join("–" if r[key] is None else f"{r[key]:.3f}" for key in keys)
                for r in (rules, fitted, switched)
            ]
            reachable = "–" if fitted["reachable"] is None else f"{fitted['reachable']:.3f}"
            counts = f"{rules['questions']} | {rules['parts']}"
            print(f"| {name} | {half} | {counts} | {cells[0]} | {cells[1]} | {cells[2]} | {reachable} |")
    return 0
