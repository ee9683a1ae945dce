"""Replay the query benchmark's questions and write or compare what `research` answers them.

A speed change to the research pipeline must not change an answer: run this before and after it on the base
`research bench --only query` built (same --chunks), then compare. Everything a question returns is compared
(answer, short answer, parts, citations, the chunks in order with their scores, ranks and evidence, sentence
checks, statuses) except the timings and the sources' latencies.

Usage:
    python scripts/replay_bench_questions.py write BEFORE.jsonl [--chunks 10000] [--queries 60]
    python scripts/replay_bench_questions.py compare BEFORE.jsonl AFTER.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def write(path: Path, chunks: int, queries: int) -> int:
    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import get_settings
    from pipelines.bench import _catalog_for, bench_collection, bench_questions, wait_for_keyword_memory
    from pipelines.runtime import setup

    setup()
    collection = bench_collection(chunks)  # the base `research bench --only query` built (or reused)
    catalog = _catalog_for(collection)
    # Keyword search answers on the database until its in-memory copy of the postings is loaded, and the two
    # scorers' BM25 can differ in the last bit: every question is answered with the copy loaded (one copy per
    # database and collection in the process, shared by the pipeline's searches).
    store = open_knowledge_base(get_settings(), collection=collection)
    have = store.count_chunks()
    if have != chunks:
        # An empty or other base would answer every question from nothing, and two such files compare equal.
        print(
            f"the collection {collection!r} holds {have} chunks, not {chunks}: run `research bench --only query` "
            f"(its base of {chunks} chunks) with this data folder first",
            file=sys.stderr,
        )
        return 2
    questions = bench_questions(queries)
    store.keyword_search(questions[0], 1)  # the first search starts the load
    if not wait_for_keyword_memory(store):
        print("the keyword postings did not load in time: early answers may differ in a last bit", file=sys.stderr)
    with path.open("w", encoding="utf-8") as out:
        for question in questions:
            result = catalog.research(question, sources=["kb"])
            data = result.model_dump(mode="json", exclude={"timings"})
            for status in data["statuses"]:
                status.pop("execution_time_ms", None)  # a latency, not an answer
            out.write(json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"{queries} answers written to {path}")
    return 0


def compare(before: Path, after: Path) -> int:
    old = before.read_text(encoding="utf-8").splitlines()
    new = after.read_text(encoding="utf-8").splitlines()
    if len(old) != len(new):
        print(f"{len(old)} answers against {len(new)}: not the same questions")
        return 1
    differing = [index for index, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    for index in differing:
        a, b = json.loads(old[index]), json.loads(new[index])
        keys = sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))
        print(f"question {index + 1} ({a.get('question')!r}) differs in: {', '.join(keys)}")
    print(f"{len(differing)} of {len(old)} answers differ")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    written = commands.add_parser("write", help="answer the benchmark's questions and write them as JSON lines")
    written.add_argument("out", type=Path)
    written.add_argument("--chunks", type=int, default=10_000, help="the benchmark base's size (built already)")
    written.add_argument("--queries", type=int, default=60)
    compared = commands.add_parser("compare", help="count the answers that differ between two written files")
    compared.add_argument("before", type=Path)
    compared.add_argument("after", type=Path)
    args = parser.parse_args()
    try:
        if args.command == "write":
            return write(args.out, args.chunks, args.queries)
        return compare(args.before, args.after)
    except OSError as exc:  # a file that is missing or cannot be written: one line, not a stack trace
        if args.command == "compare":
            print(f"cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        else:
            print(f"the answers could not be written: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
