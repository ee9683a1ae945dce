"""Score the answer step on captured evaluation runs, per set and half, with the tree's packaged models.

A capture (`research eval QUESTIONS --capture FILE`) holds the chunks the answer step was given for each question;
replaying it with this tree's answer step (`pipelines.evaluation.answer_replay.replay_sets`) is deterministic and
needs no store, so two trees (or two model files) are compared on the same retrieval. Per set and half it prints:
questions, parts, shown / right (shown and token F1 >= 0.5), coverage, precision of the shown headlines, p@0.50 (the
precision of the more confident half of the parts), cov@0.90 (the largest coverage at precision >= 0.90), ECE,
AURC and EM / F1 of every part's short answer; for the analyst sets, whose no-answer questions make every headline
wrong, shown / wrong.

Usage:
    python scripts/score_captures.py --captures DIR [squad,hotpotqa,...] [-v] [--json OUT.jsonl]

DIR holds the capture files by their usual names (`squad.jsonl`, `hotpotqa_dev40.jsonl`, `musique_dev40.jsonl`,
`demo_questions.jsonl`, `demo_paraphrases.jsonl`, `demo_analyst.jsonl`, `demo_analyst_fresh.jsonl`,
`demo_verdicts.jsonl`, `verdicts_hotpotqa_corpus.jsonl`, `verdicts_musique_corpus.jsonl`,
`bridges_hotpotqa_corpus.jsonl`, `bridges_musique_corpus.jsonl`); the sets default to every
one present. `-v` lists every part's short answer; `--json` writes each part's short answer, confidence and shown
flag, a line a question, for diffing two trees.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SETS = {
    "squad": ("squad_dev_a", "squad.jsonl"),
    "hotpotqa": ("hotpotqa_dev40", "hotpotqa_dev40.jsonl"),
    "musique": ("musique_dev40", "musique_dev40.jsonl"),
    "demo": ("demo_questions", "demo_questions.jsonl"),
    "para": ("demo_paraphrases", "demo_paraphrases.jsonl"),
    "analyst": ("demo_analyst", "demo_analyst.jsonl"),
    "fresh": ("demo_analyst_fresh", "demo_analyst_fresh.jsonl"),
    "verdicts": ("demo_verdicts", "demo_verdicts.jsonl"),
    "verdicts_hotpotqa": ("verdicts_hotpotqa_corpus", "verdicts_hotpotqa_corpus.jsonl"),
    "verdicts_musique": ("verdicts_musique_corpus", "verdicts_musique_corpus.jsonl"),
    "bridges_hotpotqa": ("bridges_hotpotqa_corpus", "bridges_hotpotqa_corpus.jsonl"),
    "bridges_musique": ("bridges_musique_corpus", "bridges_musique_corpus.jsonl"),
}


def precision_at(rows: list[tuple], coverage: float) -> float | None:
    """The precision of the `coverage` most confident parts (rows of `selective.part_rows`)."""
    rated = sorted((r for r in rows if r[0] > 0), key=lambda r: -r[0])
    top = rated[: max(1, round(coverage * len(rows)))]
    return sum(r[1] for r in top) / len(top) if top else None


def coverage_at(rows: list[tuple], precision: float) -> float:
    """The largest share of parts that, taken most confident first, keeps `precision`."""
    rated = sorted((r for r in rows if r[0] > 0), key=lambda r: -r[0])
    best, right = 0.0, 0
    for count, row in enumerate(rated, 1):
        right += row[1]
        if right / count >= precision:
            best = count / len(rows)
    return best


def _number(value: object) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="?", help="comma-separated of " + ",".join(SETS))
    parser.add_argument("--captures", type=Path, required=True, help="the folder holding the capture files")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every part's short answer")
    parser.add_argument("--json", type=Path, help="write each question's parts, a line each")
    args = parser.parse_args(argv)
    chosen = args.sets.split(",") if args.sets else [k for k, (_, f) in SETS.items() if (args.captures / f).exists()]
    unknown = [name for name in chosen if name not in SETS]
    missing = [SETS[name][1] for name in chosen if name in SETS and not (args.captures / SETS[name][1]).exists()]
    if unknown or missing or not chosen:
        print(f"unknown sets {unknown}; missing captures {missing} in {args.captures}", file=sys.stderr)
        return 2

    from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
    from pipelines.evaluation import metrics
    from pipelines.evaluation.answer_replay import replay_sets
    from pipelines.evaluation.jsonl import EvaluationInputError
    from pipelines.evaluation.selective import part_rows, selective_scores

    sets = {SETS[name][0]: args.captures / SETS[name][1] for name in chosen}
    try:
        records = replay_sets(sets, {"x": ExtractiveAnswerGenerator()})["x"]
    except EvaluationInputError as error:  # a line that is not JSON, or a record without its query or chunks
        print(f"cannot score the captures: {error}", file=sys.stderr)
        return 2
    print("set half q parts shown/right cov prec p@0.50 cov@0.90 ECE AURC EM F1")
    for name in sets:
        for half in ("tune", "check"):
            recs = [r for r in records if r["set"] == name and r["half"] == half]
            if name.startswith("demo_analyst"):
                shown = [(r, p) for r in recs for p in r["parts"] if p.get("sure") and p.get("short_answer")]
                wrong = sum(
                    1 for r, p in shown if not r["answers"] or metrics.token_f1(p["short_answer"], r["answers"]) < 0.5
                )
                print(f"{name} {half} q={len(recs)} shown/wrong {len(shown)}/{wrong}")
            else:
                recs = [r for r in recs if r["answers"]]
                rows = [row for r in recs for row in part_rows(r)]
                scores = selective_scores(rows)
                shown = sum(r[2] for r in rows)
                right = sum(r[2] and r[1] for r in rows)
                em = metrics.mean(metrics.exact_match(r["candidates"], r["answers"]) for r in recs) if recs else None
                f1 = metrics.mean(metrics.token_f1(r["candidates"], r["answers"]) for r in recs) if recs else None
                values = (scores["coverage"], scores["precision"], precision_at(rows, 0.5), coverage_at(rows, 0.9))
                values += (scores["ece"], scores["aurc"], em, f1)
                print(name, half, len(recs), len(rows), f"{shown}/{right}", *map(_number, values))
            if args.verbose:
                for r in recs:
                    for p in r["parts"]:
                        if p.get("short_answer"):
                            ok = bool(r["answers"]) and metrics.token_f1(p["short_answer"], r["answers"]) >= 0.5
                            mark = ("SHOWN " if p.get("sure") else "      ") + ("right" if ok else "WRONG")
                            confidence = float(p.get("short_answer_confidence") or 0)
                            print(
                                f"   {mark} {confidence:.3f} {r['id']}: {p['short_answer']!r} gold={r['answers'][:2]}"
                            )
    if args.json:
        lines = [
            json.dumps(
                {
                    "set": r["set"],
                    "half": r["half"],
                    "id": r["id"],
                    "parts": [
                        (
                            p.get("short_answer"),
                            round(float(p.get("short_answer_confidence") or 0), 4),
                            bool(p.get("sure")),
                        )
                        for p in r["parts"]
                    ],
                }
            )
            for r in records
        ]
        args.json.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
