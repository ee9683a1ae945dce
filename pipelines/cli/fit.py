"""`research fit answer SET=CAPTURE.jsonl ...`: fits the answer confidence on labelled question sets and writes it."""

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
