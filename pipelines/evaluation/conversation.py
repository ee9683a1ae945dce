"""`research eval follow-ups` and `research eval conflicts`: the follow-up rewrite and the disagreement finder
scored on their labelled sets, each split into a tune and a check half by a fixed seed.

- follow-ups (`tests/data/follow_ups.jsonl`: earlier `turns`, the `question`, the intended `rewrite` and its
  `subject`, "" for a question that stands alone, and the gold `answer` of the second question): rewrite accuracy
  (follow-ups rewritten to the intended subject), exact rewrites, and the standalone-untouched rate.
- conflicts (`tests/data/disagreements.jsonl`: a `question`, small `documents` written for it, and whether they
  hold a planted `conflict` between `values`): conflict recall (planted conflicts reported with every planted
  value) and false conflicts per answer (reported where none was planted, or between other values).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from components.generation.conflict_finder import YEAR, amount_key, date_key, find_conflicts, name_key
from components.generation.follow_up import FollowUpRewriter
from pipelines.evaluation.questions import load_jsonl

SPLIT_SEED = 34
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
FOLLOW_UPS = DATA / "follow_ups.jsonl"
DISAGREEMENTS = DATA / "disagreements.jsonl"


def split_halves(records: list[dict[str, Any]], seed: int = SPLIT_SEED) -> dict[str, list[dict[str, Any]]]:
    """The records split into `tune` and `check` halves by a seeded shuffle of their ids."""
    ids = sorted(str(record["id"]) for record in records)
    random.Random(seed).shuffle(ids)
    tune = set(ids[: len(ids) // 2])
    return {
        "tune": [record for record in records if str(record["id"]) in tune],
        "check": [record for record in records if str(record["id"]) not in tune],
    }


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("'", "").replace("?", "").split())


def score_follow_ups(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Rewrite accuracy, exact rewrites and the standalone-untouched rate of the offline rewrite."""
    rewriter = FollowUpRewriter(generator="extractive")
    follow_ups = right = exact = standalone = untouched = 0
    misses = []
    for record in records:
        answered_as = rewriter.run(question=record["question"], history=record.get("turns") or [])["answered_as"]
        if record.get("rewrite"):
            follow_ups += 1
            subject_found = _norm(record["subject"]) in _norm(answered_as)
            right += subject_found
            exact += _norm(answered_as) == _norm(record["rewrite"])
            if not subject_found:
                misses.append({"id": record["id"], "question": record["question"], "answered_as": answered_as})
        else:
            standalone += 1
            untouched += not answered_as
            if answered_as:
                misses.append({"id": record["id"], "question": record["question"], "answered_as": answered_as})
    return {
        "follow_ups": follow_ups,
        "rewrite_accuracy": right / follow_ups if follow_ups else None,
        "exact_rewrites": exact / follow_ups if follow_ups else None,
        "standalone": standalone,
        "standalone_untouched": untouched / standalone if standalone else None,
        "misses": misses,
    }


def _value_key(text: str) -> tuple[str, Any]:
    """A value in the form it is compared in: a date (year, month, day), an amount, or the words of a name."""
    if YEAR.search(text) and not re.search(r"\d[\d,.]*\s*(?:thousand|million|billion|bn|mn)\b", text, re.I):
        return "date", date_key(text)
    amount = amount_key(text)
    if amount is not None:
        return "amount", amount
    return "name", name_key(text)


def _matches(planted: str, found: str) -> bool:
    """Whether a reported value is the planted one: the same date to the planted precision ("2019" is "March
    2019", never "20"), the same amount ("$3 million" is "3 million"), the same name."""
    (kind, want), (found_kind, got) = _value_key(planted), _value_key(found)
    if kind != found_kind or want is None or got is None:
        return False
    if kind == "date":
        return all(w is None or w == g for w, g in zip(want, got, strict=True))
    return want == got


def _covers(conflict: dict[str, Any], values: list[str]) -> bool:
    return all(any(_matches(value, side["value"]) for side in conflict["values"]) for value in values)


def score_conflicts(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Conflict recall and false conflicts per answer of the disagreement finder over each record's documents."""
    from haystack import Document

    planted = recalled = false = 0
    misses = []
    for record in records:
        documents = [
            Document(content=doc["text"], meta={"document_id": doc["id"], "source_date": doc.get("date")})
            for doc in record["documents"]
        ]
        conflicts = find_conflicts(record["question"], documents)
        if record["conflict"]:
            planted += 1
            hit = any(_covers(conflict, record["values"]) for conflict in conflicts)
            recalled += hit
            false += sum(not _covers(conflict, record["values"]) for conflict in conflicts)
            if not hit:
                misses.append({"id": record["id"], "kind": record["kind"], "found": conflicts})
        else:
            false += len(conflicts)
            if conflicts:
                misses.append({"id": record["id"], "kind": record["kind"], "found": conflicts})
    return {
        "answers": len(records),
        "planted_conflicts": planted,
        "conflict_recall": recalled / planted if planted else None,
        "false_conflicts_per_answer": false / len(records) if records else None,
        "misses": misses,
    }


def _table(rows: dict[str, dict[str, Any]], columns: Sequence[str]) -> str:
    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else "-" if value is None else str(value)

    lines = ["| half | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for half, summary in rows.items():
        lines.append(f"| {half} | " + " | ".join(cell(summary[column]) for column in columns) + " |")
    return "\n".join(lines)


def main(kind: str, argv: Sequence[str] | None = None) -> int:
    """`research eval follow-ups|conflicts [--set PATH] [--json] [--misses]`: tune beside check."""
    parser = argparse.ArgumentParser(prog=f"research eval {kind}")
    default = FOLLOW_UPS if kind == "follow-ups" else DISAGREEMENTS
    parser.add_argument("--set", dest="path", type=Path, default=default, help=f"the labelled set (default {default})")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--misses", action="store_true", help="list what was missed or wrongly reported")
    args = parser.parse_args(list(argv or []))
    if kind == "follow-ups":
        records = load_jsonl(args.path, ("id", "turns", "question", "rewrite", "subject"))
        score, columns = (
            score_follow_ups,
            ("follow_ups", "rewrite_accuracy", "exact_rewrites", "standalone", "standalone_untouched"),
        )
    else:
        records = load_jsonl(args.path, ("id", "question", "documents", "conflict", "values"))
        score, columns = (
            score_conflicts,
            ("answers", "planted_conflicts", "conflict_recall", "false_conflicts_per_answer"),
        )
    halves = split_halves(records)
    rows = {half: score(part) for half, part in halves.items()}
    if args.json:
        sys.stdout.write(json.dumps(rows, indent=2, default=str) + "\n")
        return 0
    sys.stdout.write(_table(rows, columns) + "\n")
    if args.misses:
        for half, summary in rows.items():
            for miss in summary["misses"]:
                sys.stdout.write(f"{half}: {json.dumps(miss, ensure_ascii=False, default=str)}\n")
    return 0
