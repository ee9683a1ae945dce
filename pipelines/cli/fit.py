"""`research fit answer SET=CAPTURE.jsonl ...`: fits the answer confidence on labelled question sets and writes it;
`research fit verdicts SET=CAPTURE.jsonl ...`: counts how often each kind of verdict is right and writes the rates
into the confidence file;
`research fit scoring SET=CAPTURE.jsonl ...`: fits the answer's sentence and span weights, or (`--ablate`) measures
what each rule family adds."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipelines.cli import UserError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("fit", help="fit the offline answer's models on labelled question sets")
    commands = parser.add_subparsers(dest="fit_command", metavar="MODEL", required=True)
    answer = _fit_command(
        commands,
        "answer",
        fit_answer,
        "model file",
        help="fit the short answer's confidence (tune half) and its threshold (check half)",
        description="Replays the answer step on captured question sets (`research eval QUESTIONS.jsonl --capture "
        "FILE`), fits the confidence of each part's short answer on the sets' tune halves, chooses the threshold "
        "for about the target precision of shown headlines on their check halves, and writes the model file.",
    )
    answer.add_argument("--threshold", type=float, default=None, help="use this threshold instead of choosing one")
    answer.add_argument("--target", type=float, default=0.9, help="check-half headline precision (default 0.9)")
    answer.add_argument(
        "--ablation", action="store_true", help="also print what each evidence feature group adds (tune/check AUC)"
    )
    answer.add_argument(
        "--binary-unscaled",
        action="store_true",
        help="centre a yes/no feature without dividing it by its spread; divide the others by twice theirs",
    )
    answer.add_argument("--chart", type=Path, default=None, help="also write a risk-coverage chart (PNG) here")
    scoring = _fit_command(
        commands,
        "scoring",
        fit_scoring,
        "scoring file",
        help="fit the answer's sentence and span weights (tune half), kept where the check half does not lose",
        description="Replays the answer step on captured question sets, fits the weights the offline answer chooses "
        "its sentence and short answer with on the sets' tune halves (a pairwise ranking of each part's candidates), "
        "keeps each fitted group of weights only when the check halves do not lose by it, and writes the scoring "
        "file. With --ablate, replays the sets with each rule family switched off instead and prints what each adds.",
    )
    scoring.add_argument("--start", default="", help="the scoring file to start from (default: the packaged one)")
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
    _fit_command(
        commands,
        "verdicts",
        fit_verdicts,
        "confidence model file",
        regularised=False,
        help="count how often each kind of verdict is right (tune half) and write the rates into the confidence file",
        description="Replays the answer step on captured question sets, counts each kind of verdict (the option a "
        "'which ..., A or B?' question picks; the yes or no of a question asked of several subjects alike, 'are A and "
        "B both ...?'; the yes or no of any other yes/no question) and how many are right on the sets' "
        "tune halves, and writes each kind's rate into the confidence model file, whose logistic model stays as it "
        "is: a verdict of a counted kind is then as sure as its rate. Run it again after `research fit answer`, "
        "which writes the file anew.",
    )
    spans = _fit_command(
        commands,
        "spans",
        fit_spans,
        "span model file",
        help="fit the short answer's span chooser (tune half) and score it beside the rules' spans (check half)",
        description="Replays the answer step on captured question sets with the span chooser off, reads every "
        "candidate span of each part's sentence, fits the model that chooses among them on the sets' tune halves, "
        "scores its choices beside the rules' spans on both halves, and writes the span model file. Refit the "
        "confidence afterwards (`research fit answer`): it reads the span model's probability and margin.",
    )
    spans.add_argument(
        "--contexts",
        type=Path,
        default=None,
        help="keep what the replay logged in this file, and read it instead of replaying when it exists",
    )
    spans.add_argument(
        "--objective",
        choices=("pointwise", "pairwise", "listwise"),
        default="pointwise",
        help="how the model that chooses the pick is fitted: each candidate alone (default), each right candidate "
        "against each wrong one of its part, or a softmax over each part's candidates; a ranker is written beside the "
        "pointwise model, which still gives the probability the answer confidence reads",
    )
    spans.add_argument(
        "--cv",
        action="store_true",
        help="choose the regularisation strength of the model that picks by grouped cross-validation on the tune half "
        "(instead of --c)",
    )


def _fit_command(
    commands: Any, name: str, func: Any, out: str, regularised: bool = True, **texts: str
) -> argparse.ArgumentParser:
    """The `research fit NAME` parser with what every fit reads: the captured sets, the file it writes (`out`,
    the packaged one by default) and, for a fit with a penalty (`regularised`), its strength."""
    parser = commands.add_parser(name, **texts)
    parser.add_argument(
        "sets",
        nargs="+",
        metavar="SET=CAPTURE.jsonl",
        help="a set's name (squad..., hotpotqa..., musique..., any) "
        "and its capture; the name decides how it is split into halves",
    )
    parser.add_argument("--out", type=Path, default=None, help=f"{out} (default: the packaged one)")
    if regularised:
        parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength (default 1.0)")
    parser.set_defaults(func=func)
    return parser


def _command(name: str, sets: dict[str, Path]) -> str:
    """The command line a fitted file records: `research fit NAME` and the sets by their file names."""
    return f"research fit {name} " + " ".join(shlex.quote(f"{set_name}={path.name}") for set_name, path in sets.items())


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


def _fit_inputs(args: argparse.Namespace) -> dict[str, Path]:
    """The captured sets every fit reads, once its regularisation strength (if it has one) is checked."""
    if not getattr(args, "c", 1.0) > 0:  # also not NaN
        raise UserError("--c must be above 0")
    return _sets(args.sets)


def fit_answer(args: argparse.Namespace) -> int:
    from components.generation.answer_confidence import DEFAULT_MODEL_PATH
    from pipelines.evaluation.confidence_fit import HALVES, fit_answer_confidence
    from pipelines.evaluation.questions import EvaluationInputError
    from pipelines.evaluation.selective import curve_summary, part_rows, write_risk_coverage_chart

    sets = _fit_inputs(args)
    if args.threshold is not None and not 0 <= args.threshold <= 1:
        raise UserError("--threshold must be between 0 and 1")
    if not 0 < args.target <= 1:
        raise UserError("--target must be above 0 and at most 1")
    command = _command("answer", sets)
    out = args.out or DEFAULT_MODEL_PATH
    with _fit_errors(EvaluationInputError):
        report = fit_answer_confidence(
            sets,
            out=out,
            threshold=args.threshold,
            target=args.target,
            c=args.c,
            command=command,
            ablation=args.ablation,
            binary_unscaled=args.binary_unscaled,
        )
    model = report["model"]
    print(
        f"Fitted on {model['tune_parts']} tune-half short answers ({model['tune_right']} right); threshold "
        f"{model['threshold']:.3f}; written to {out}"
    )
    print(_check_headlines(model["check_headlines"]))
    measures = ("coverage", "precision", "aurc", "ece", "exact_match", "token_f1")
    rows = []
    for name, halves in report["sets"].items():
        for half in HALVES:
            row = halves[half]
            rows.append([name, half, row["questions"], row["parts"], *(_number(row[key]) for key in measures)])
    _print_table(["set", "half", "questions", "parts", "coverage", "precision", "AURC", "ECE", "EM", "F1"], rows)
    if report["ablation"]:
        columns = [key for key in report["ablation"][0] if key != "variant"]
        _print_table(
            ["features", *columns],
            ([line["variant"], *(_number(line[key]) for key in columns)] for line in report["ablation"]),
        )
    if args.chart is not None:
        curves = {
            f"{name} {half}": curve_summary(
                [row for r in report["records"] if r["set"] == name and r["half"] == half for row in part_rows(r)]
            )
            for name in report["sets"]
            for half in HALVES
        }
        try:
            print(f"Chart: {write_risk_coverage_chart(curves, args.chart)}")
        except OSError as exc:
            raise _file_error(exc) from exc
    return 0


def _check_headlines(headlines: dict[str, Any]) -> str:
    """The pooled check halves' headlines at the threshold, with the interval of their precision."""
    if not headlines["shown"]:
        return "At this threshold the check halves show no headline: their precision cannot be told."
    low, high = headlines["interval"]
    return (
        f"At this threshold the check halves show {headlines['shown']} headlines, {headlines['right']} right "
        f"({headlines['precision']:.3f}; {headlines['level']:.0%} interval {low:.3f}-{high:.3f})."
    )


@contextmanager
def _fit_errors(*input_errors: type[Exception]) -> Iterator[None]:
    """A fit's refusal of its inputs (`input_errors`, or a ValueError) or a file it cannot read or write, as the
    one-sentence error a user reads."""
    try:
        yield
    except (*input_errors, ValueError) as exc:
        raise UserError(str(exc)) from exc
    except OSError as exc:
        raise _file_error(exc) from exc


def _file_error(exc: OSError) -> UserError:
    """A file a fit reads or writes (`--out`, `--contexts`, `--chart`) that cannot be, in one sentence."""
    where = f" {exc.filename}" if exc.filename else ""
    return UserError(f"cannot read or write{where}: {exc.strerror or exc}")


def _number(value: float | None) -> str:
    return "–" if value is None else str(value) if isinstance(value, int) else f"{value:.3f}"


def _cells(row: dict[str, Any], keys: Sequence[str] = ()) -> str:
    """The row's measures (the scoring fit's, unless `keys` names others) as `a / b / c`."""
    from pipelines.evaluation.scoring_fit import MEASURES

    return " / ".join(_number(row[key]) for key in keys or MEASURES)


def _print_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A Markdown table on standard output."""
    print("| " + " | ".join(header) + " |")
    print("|---" * len(header) + "|")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def fit_verdicts(args: argparse.Namespace) -> int:
    from components.generation.answer_confidence import DEFAULT_MODEL_PATH, ConfidenceModelError
    from pipelines.evaluation.halves import HALVES
    from pipelines.evaluation.questions import EvaluationInputError
    from pipelines.evaluation.verdict_fit import fit_verdicts

    sets = _fit_inputs(args)
    out = args.out or DEFAULT_MODEL_PATH
    with _fit_errors(EvaluationInputError, ConfidenceModelError):
        report = fit_verdicts(sets, out=out, command=_command("verdicts", sets), model=out if out.is_file() else None)
    print(f"Verdicts counted on the tune halves; their rates written to {out}")
    rows = []
    for kind in dict.fromkeys([*report["kinds"], *report["check"]]):
        tune, check = report["kinds"].get(kind), report["check"].get(kind)
        cells = [f"{half['right']} / {half['counted']}" if half else "–" for half in (tune, check)]
        rows.append([kind, *cells, _number(tune["probability"]) if tune else "– (the model's)"])
    _print_table(["verdict", f"{HALVES[0]}: right / counted", f"{HALVES[1]}: right / counted", "confidence"], rows)
    return 0


def fit_scoring(args: argparse.Namespace) -> int:
    import json
    import sys

    from components.generation.answer_scoring import DEFAULT_SCORING_PATH, RULE_FAMILIES, ScoringModelError
    from pipelines.evaluation.halves import HALVES
    from pipelines.evaluation.questions import EvaluationInputError
    from pipelines.evaluation.scoring_fit import HEADLINES, MEASURES, ablate, fit_scoring

    sets = _fit_inputs(args)
    if args.start and not Path(args.start).is_file():
        raise UserError(f"{args.start} does not exist or is not a file")

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    with _fit_errors(EvaluationInputError, ScoringModelError):
        if args.ablate is not None:
            families = args.ablate or list(RULE_FAMILIES)
            unknown = sorted(set(families) - set(RULE_FAMILIES))
            if unknown:
                raise UserError(f"unknown rule families: {', '.join(unknown)} (known: {', '.join(RULE_FAMILIES)})")
            halves = HALVES if args.halves == "both" else (args.halves,)
            table = ablate(sets, families, scoring_model=args.start, progress=progress, halves=halves)
            measures = (*MEASURES, *HEADLINES)
            _print_table(
                ["rules", "set", "tune EM / F1 / contains / headlines / right", "check (the same)"],
                (
                    [
                        name if name == "all rules" else f"without {name}",
                        set_name,
                        _cells(s["tune"], measures),
                        _cells(s["check"], measures),
                    ]
                    for name, scores in table.items()
                    for set_name, s in scores.items()
                ),
            )
            report: dict[str, Any] = {"ablation": table}
        else:
            command = _command("scoring", sets)
            out = args.out or DEFAULT_SCORING_PATH
            report = fit_scoring(sets, out=out, start=args.start, c=args.c, command=command, progress=progress)
            kept = ", ".join(report["kept"]) or "none"
            print(f"Fitted groups kept (the check halves did not lose by them): {kept}; written to {out}")
            _print_table(
                ["fitted group", "kept", "pooled tune EM / F1 / contains", "pooled check EM / F1 / contains"],
                (
                    [
                        group,
                        "yes" if group in report["kept"] else "no",
                        _cells(t["all"]["tune"]),
                        _cells(t["all"]["check"]),
                    ]
                    for group, t in report["trials"].items()
                ),
            )
            _print_table(
                ["set", "half", "questions", "before EM / F1 / contains", "after EM / F1 / contains"],
                (
                    [
                        set_name,
                        half,
                        halves[half]["questions"],
                        _cells(halves[half]),
                        _cells(report["after"][set_name][half]),
                    ]
                    for set_name, halves in report["before"].items()
                    for half in HALVES
                ),
            )
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

    sets = _fit_inputs(args)
    command = _command("spans", sets)
    command += f" --objective {args.objective}" * (args.objective != "pointwise") + " --cv" * args.cv
    out = args.out or DEFAULT_MODEL_PATH
    with _fit_errors(EvaluationInputError, SpanModelError):
        report = fit_spans(
            sets,
            out=out,
            c=None if args.cv else args.c,
            command=command,
            contexts_file=args.contexts,
            objective=args.objective,
            probability_c=args.c,
        )
    model = report["model"]
    print(
        f"Fitted on {model['tune_candidates']} candidate spans of {model['tune_parts']} tune-half parts "
        f"({model['tune_right']} right, in {model['tune_right_parts']} parts); the pick replaces the rules' span "
        f"when it leads by "
        f"{model.get('switch_margin', 0.0)}; C {model['c']}"
        + (f"; ranked by a {model['rank']['objective']} model (C {model['rank']['c']})" if "rank" in model else "")
        + f"; written to {out}"
    )
    keys = ("exact_match", "token_f1", "right")
    rows = []
    for name, halves in report["scores"].items():
        for half in HALVES:
            rules, fitted = halves[half]["rules"], halves[half]["model"]
            switched = halves[half].get("switch", fitted)
            cells = [_cells(rules, keys), _cells(fitted, keys), _cells(switched, keys), _number(fitted["reachable"])]
            rows.append([name, half, rules["questions"], rules["parts"], *cells])
    header = [
        "set",
        "half",
        "questions",
        "parts",
        "rules EM / F1 / parts right",
        "model EM / F1 / parts right",
        "switch EM / F1 / parts right",
    ]
    _print_table([*header, "reachable"], rows)
    return 0
