"""`research eval`: evaluations. `research eval timelines --corpus C --gold G` scores entity timelines;
`research eval QUESTIONS.jsonl ...` runs a question set."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate: entity timelines, follow-up rewrites (eval follow-ups), disagreements (eval conflicts) or a "
        "question set (eval QUESTIONS.jsonl ...)",
        description="`research eval timelines --corpus CORPUS.jsonl --gold TIMELINES.jsonl [--collection NAME]` "
        "scores the graph's entity timelines (event recall, precision, date accuracy) against a gold file, next to "
        "a semantic-search baseline. `research eval QUESTIONS.jsonl ...` evaluates a question set. `research eval "
        "compare BEFORE AFTER` compares two runs answer for answer and fact for fact (exit code 1 when they differ, 2 "
        "when they cannot be compared).",
    )
    parser.add_argument(
        "target", help="'timelines', 'follow-ups', 'conflicts', 'compare', or a question set ending in .jsonl"
    )
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="the options of that evaluation")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.cli import UserError

    if args.target == "timelines":
        from pipelines.evaluation import timelines

        parser = argparse.ArgumentParser(prog="research eval timelines")
        timelines.add_arguments(parser)
        return timelines.main(parser.parse_args(args.rest))
    if args.target == "compare":
        from pipelines.evaluation import compare

        return compare.main(args.rest)
    if args.target in ("follow-ups", "conflicts"):
        from pipelines.evaluation import conversation

        return conversation.main(args.target, args.rest)
    if args.target.endswith(".jsonl"):
        from pipelines.evaluation import questions

        return questions.main([args.target, *args.rest])
    raise UserError(
        f"unknown evaluation {args.target!r}: use 'timelines', 'follow-ups', 'conflicts', 'compare' or a question set "
        "(.jsonl)"
    )
